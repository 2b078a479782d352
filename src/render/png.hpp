// Encodes an Image as PNG bytes in memory (8-bit RGB, no metadata), so that the caller can write
// every output file atomically at the end of a run, via libpng (zlib level 1, no row filter
// up to ~10 800 px wide, "up" beyond: fast for heatmaps, whose rows repeat; see png.cpp for the
// measurements). Never writes files.
#pragma once

#include <string>

#include "render/image.hpp"

namespace attnviz {

/// The PNG encoding of `image`. Deterministic: the same pixels always give the same bytes.
/// `destination` only names the image in the error message (e.g. the output path it is for).
/// Throws OutputError::cannot_write(destination, ...) for an empty image or when libpng fails
/// (out of memory). Thread-safe: calls share no state, so images may be encoded in parallel.
std::string encode_png(const Image& image, const std::string& destination = "PNG image");

}  // namespace attnviz
