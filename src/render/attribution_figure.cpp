#include "render/attribution_figure.hpp"

#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "render/attribution_page.hpp"
#include "render/color_scale.hpp"
#include "render/head_grid.hpp"
#include "render/overview_collector.hpp"
#include "render/picture_fonts.hpp"
#include "render/picture_formats.hpp"
#include "render/png.hpp"
#include "render/svg_document.hpp"
#include "render/svg_grid.hpp"

namespace attnviz {

namespace {

const Rgb kBackground{255, 255, 255};  // between the stacked maps, as the grids' own background

// [layer][head] as a Matrix [L, h].
Matrix layer_head_table(const std::vector<std::vector<double>>& values) {
  Matrix table(static_cast<Eigen::Index>(values.size()), static_cast<Eigen::Index>(values.front().size()));
  for (std::size_t l = 0; l < values.size(); ++l)
    for (std::size_t h = 0; h < values[l].size(); ++h) table(static_cast<Eigen::Index>(l), static_cast<Eigen::Index>(h)) = static_cast<Scalar>(values[l][h]);
  return table;
}

// `format` ("%.3f"), or three significant digits when that would read 0.000 or -0.000 for a
// value that is not 0 (a log p of -4e-05 is not "-0.000").
std::string number(double value, const char* format) {
  char text[32];
  std::snprintf(text, sizeof text, format, value);
  if (value != 0 && std::strtod(text, nullptr) == 0) std::snprintf(text, sizeof text, "%.3g", value);
  return text;
}

std::string figure_title(const HeadAttribution& a, const AttributionTitle& t) {
  return "head attribution \u00B7 " + t.model + " \u00B7 target " + title_text(t.target_token) + " (id " +
         std::to_string(a.target_id) + ") at position " + std::to_string(a.position) + " " + title_text(t.position_token) +
         " \u00B7 logit " + number(a.logit, "%.3f") + ", log p " + number(a.log_prob, "%.3f");
}

GridRequest map_request(const std::vector<std::vector<double>>& values, const std::string& panel_title,
                        const std::string& colorbar_label, const PictureSettings& options) {
  GridRequest request;
  for (std::size_t l = 0; l < values.size(); ++l) request.query_tokens.push_back("L" + std::to_string(l));
  for (std::size_t h = 0; h < values.front().size(); ++h) request.key_tokens.push_back("H" + std::to_string(h));
  request.panels.push_back(share(layer_head_table(values)));
  request.panel_titles.push_back(panel_title);
  request.query_axis_title = "layer";
  request.key_axis_title = "head";
  request.colorbar_label = colorbar_label;
  request.scale = ScaleMode::Symmetric;
  request.panel_noun = "map";
  request.cmap = "rdbu";
  request.max_size_px = options.max_size_px;
  request.annotate = true;
  request.significant_values = true;  // a tiny ablation effect reads -0.00138, not -0.00
  return request;
}

}  // namespace

namespace {

// The encoder-decoder maps: DLA over the decoder's self- and cross-attention heads (one scale),
// and the ablation of the encoder's, the decoder's self- and cross-attention heads (one scale
// when the stacks have as many layers; else the encoder's apart).
std::vector<GridRequest> encoder_decoder_requests(const HeadAttribution& a, const PictureSettings& options) {
  const EncoderDecoderAttribution& e = *a.encoder_decoder;
  std::vector<GridRequest> requests;
  requests.push_back(map_request(a.dla.heads, "DLA: decoder self-attention heads (dec.)", "share of the logit (logit units)", options));
  requests.back().panels.push_back(share(layer_head_table(e.dla_cross)));
  requests.back().panel_titles.push_back("DLA: cross-attention heads (cross.)");
  if (a.ablation.empty()) return requests;
  const char* noun = "\u0394 log p(target) with the head's output zeroed";
  if (e.ablation_encoder.size() != a.ablation.size())
    requests.push_back(map_request(e.ablation_encoder, std::string("ablation: encoder heads (enc.)"), noun, options));
  requests.push_back(map_request(a.ablation, "ablation: decoder self-attention heads (dec.)", noun, options));
  if (e.ablation_encoder.size() == a.ablation.size()) {
    requests.back().panels.insert(requests.back().panels.begin(), share(layer_head_table(e.ablation_encoder)));
    requests.back().panel_titles.insert(requests.back().panel_titles.begin(), "ablation: encoder heads (enc.)");
  }
  requests.back().panels.push_back(share(layer_head_table(e.ablation_cross)));
  requests.back().panel_titles.push_back("ablation: cross-attention heads (cross.)");
  return requests;
}

}  // namespace

std::vector<GridRequest> attribution_requests(const HeadAttribution& a, const AttributionTitle& title, const PictureSettings& options,
                                              double memory_budget) {
  std::vector<GridRequest> requests;
  if (a.encoder_decoder) {
    requests = encoder_decoder_requests(a, options);
  } else {
    requests.push_back(map_request(a.dla.heads, "direct logit attribution: each head's share of the logit",
                                   "share of the logit (logit units)", options));
    if (!a.ablation.empty())
      requests.push_back(map_request(a.ablation, "ablation: change in log p(target) with the head's output zeroed",
                                     "\u0394 log p(target)", options));
  }
  requests.front().figure_title = figure_title(a, title);
  for (GridRequest& request : requests) {
    // The stacked maps share --max-size's height and, with the stacked copy, the memory budget.
    request.max_height_px = std::max(1, options.max_size_px / static_cast<int>(requests.size()));
    request.max_memory_bytes = memory_budget / static_cast<double>(requests.size() + 1);
  }
  return requests;
}

void add_attribution_pictures(const HeadAttribution& a, const AttributionTitle& title, const PictureSettings& options,
                              const std::string& folder, double memory_budget, const std::vector<std::string>& top_heads,
                              OutputSet& files, std::vector<std::string>& warnings) {
  const std::string png = (std::filesystem::path(folder) / "attribution.png").string();
  const FontSet fonts = picture_fonts(options);
  const std::vector<GridRequest> requests = attribution_requests(a, title, options, memory_budget);
  if (wants_format(options, "png")) {
    std::vector<Image> parts;
    for (const GridRequest& request : requests) {
      RenderedGrid grid = render_grid(request, fonts);
      for (const std::string& w : grid.warnings) warnings.push_back(png + ": " + w);
      parts.push_back(std::move(grid.image));
    }
    files.add(png, encode_png(parts.size() == 1 ? parts.front() : stack_vertically(parts, kBackground), png));
  }
  if (wants_format(options, "svg")) {
    std::vector<SvgPicture> parts;
    for (std::size_t i = 0; i < requests.size(); ++i) parts.push_back(grid_svg(requests[i], fonts, "p" + std::to_string(i)));
    files.add(with_extension(png, ".svg"), svg_document(parts));
  }
  if (wants_format(options, "html")) {
    // The heads' block, as the encoder-decoder panels' titles name it ("… (cross.)").
    std::vector<std::vector<std::string>> prefixes;
    for (const GridRequest& request : requests) {
      prefixes.emplace_back();
      for (const std::string& panel : request.panel_titles) {
        std::string prefix;
        for (const char* block : {"enc.", "dec.", "cross."})
          if (panel.find(std::string("(") + block + ")") != std::string::npos) prefix = block;
        prefixes.back().push_back(prefix);
      }
    }
    files.add(with_extension(png, ".html"), attribution_page_html(requests, prefixes, top_heads));
  }
}

}  // namespace attnviz
