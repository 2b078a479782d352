// --format: which picture files a run writes (png, svg, html), and the SVG and HTML outputs
// that go beside the PNGs: grid.svg and head_<h>.svg from the same grid requests as the PNGs,
// and index.html collecting one view per attention block. Renders in memory; run() commits.
#pragma once

#include <string>
#include <vector>

#include "io/atomic_output.hpp"
#include "render/font.hpp"
#include "render/head_grid.hpp"
#include "render/html_report.hpp"
#include "render/picture_settings.hpp"

namespace attnviz {

/// True when `format` ("png", "svg" or "html") is among options.formats.
bool wants_format(const PictureSettings& options, const std::string& format);

/// `path` with its extension replaced by `extension` (".svg"): grid.png -> grid.svg.
std::string with_extension(const std::string& path, const std::string& extension);

/// Queues, for each (request, PNG path) pair, the SVG of the request at the PNG's path with
/// ".svg", made on png_workers(threads, requests) threads (the bytes do not depend on them).
/// Throws as grid_svg(): the first failure in request order.
void add_svg_pictures(const std::vector<GridRequest>& requests, const std::vector<std::string>& png_paths,
                      const FontSet& fonts, OutputSet& files, int threads);

/// "12 PNG files" when only PNGs are written, else e.g. "19 files (png, svg, html)".
std::string files_written(const PictureSettings& options, std::size_t count);

/// What each folder holds: "grid.png and one per head" for PNGs alone; with other formats
/// e.g. "grid.png, grid.svg, one of each per head, and index.html".
std::string pictures_written(const PictureSettings& options);

/// "layer 2" from a block folder such as "layer_2" or "decoder/layer_2/cross".
std::string view_name(const std::string& block_folder);

}  // namespace attnviz
