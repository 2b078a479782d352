// Encodes an Image as PNG bytes in memory (8-bit RGB, no metadata), so that the caller can write
// every output file atomically at the end of a run. Never writes files itself.
#pragma once

#include <string>

#include "render/image.hpp"

namespace attnviz {

/// The PNG encoding of `image`. Deterministic: the same pixels always give the same bytes.
/// `destination` only names the image in the error message (e.g. the output path it is for).
/// Throws OutputError::cannot_write(destination, ...) if stb_image_write fails (an empty
/// image or out of memory).
/// Not thread-safe: it sets stb_image_write's global compression settings for each call.
std::string encode_png(const Image& image, const std::string& destination = "PNG image");

}  // namespace attnviz
