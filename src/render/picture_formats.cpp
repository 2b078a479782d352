#include "render/picture_formats.hpp"

#include <algorithm>
#include <atomic>
#include <exception>
#include <filesystem>

#include "core/parallel_for.hpp"
#include "render/png_batch.hpp"
#include "render/svg_document.hpp"
#include "render/svg_grid.hpp"

namespace attnviz {

bool wants_format(const PictureSettings& options, const std::string& format) {
  return std::find(options.formats.begin(), options.formats.end(), format) != options.formats.end();
}

std::string with_extension(const std::string& path, const std::string& extension) {
  return std::filesystem::path(path).replace_extension(extension).string();
}

void add_svg_pictures(const std::vector<GridRequest>& requests, const std::vector<std::string>& png_paths,
                      const FontSet& fonts, OutputSet& files, int threads) {
  // Each SVG embeds its panels as PNGs: as dear as the PNG pictures, and as independent (issue 38).
  std::vector<std::string> documents(requests.size());
  std::vector<std::exception_ptr> errors(requests.size());
  std::atomic<std::size_t> next{0};
  const int workers = png_workers(threads, requests.size());
  parallel_for_blocks(static_cast<std::size_t>(workers), workers, [&](std::size_t, std::size_t) {
    for (std::size_t i = next++; i < requests.size(); i = next++) {
      try {
        documents[i] = svg_document({grid_svg(requests[i], fonts, "g")});
      } catch (...) {
        errors[i] = std::current_exception();
      }
    }
  });
  for (const std::exception_ptr& error : errors)  // the first in request order, whatever the timing
    if (error) std::rethrow_exception(error);
  for (std::size_t i = 0; i < requests.size(); ++i) files.add(with_extension(png_paths[i], ".svg"), std::move(documents[i]));
}

std::string files_written(const PictureSettings& options, std::size_t count) {
  const std::string files = std::to_string(count) + (count == 1 ? " file" : " files");
  if (options.formats == std::vector<std::string>{"png"}) return std::to_string(count) + (count == 1 ? " PNG file" : " PNG files");
  std::string names;
  for (const std::string& format : options.formats) names += (names.empty() ? "" : ", ") + format;
  return files + " (" + names + ")";
}

std::string pictures_written(const PictureSettings& options) {
  // --measure alti has one map per layer and no heads: grid.* only.
  const bool per_head = options.measure != "alti";
  if (options.formats == std::vector<std::string>{"png"}) return per_head ? "grid.png and one per head" : "grid.png";
  std::string grids;
  for (const std::string& format : options.formats) {
    if (format != "html") grids += (grids.empty() ? "grid." : ", grid.") + format;
  }
  if (grids.empty()) return "index.html";
  const bool html = wants_format(options, "html");
  if (!per_head) return grids + (html ? ", and index.html" : "");
  return grids + (grids.find(',') == std::string::npos ? " and one per head" : ", one of each per head") +
         (html ? ", and index.html" : "");
}

std::string view_name(const std::string& block_folder) {
  std::string name = block_folder;
  std::replace(name.begin(), name.end(), '_', ' ');
  std::replace(name.begin(), name.end(), '/', ' ');
  return name;
}

}  // namespace attnviz
