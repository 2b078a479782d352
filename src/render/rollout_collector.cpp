#include "render/rollout_collector.hpp"

#include <algorithm>
#include <charconv>

#include "attention/head_stats.hpp"
#include "core/error.hpp"
#include "render/font.hpp"
#include "render/head_grid.hpp"
#include "render/overview_collector.hpp"
#include "render/picture_fonts.hpp"
#include "render/png.hpp"

namespace attnviz {

namespace {

constexpr Rgb kBackground{255, 255, 255};

// The shortest text that reads back as the same float32, as the dumps write weights.
void append_float(std::string& out, double value) {
  char text[32];
  const auto end = std::to_chars(text, text + sizeof text, static_cast<float>(value)).ptr;
  out.append(text, end);
}

void append_matrix(std::string& out, const Eigen::MatrixXd& m) {
  out += "[";
  for (Eigen::Index i = 0; i < m.rows(); ++i) {
    out += i == 0 ? "[" : ", [";
    for (Eigen::Index j = 0; j < m.cols(); ++j) {
      if (j > 0) out += ", ";
      append_float(out, m(i, j));
    }
    out += "]";
  }
  out += "]";
}

}  // namespace

RolloutCollector::RolloutCollector(const ModelPictureSettings& options, bool keep_json)
    : options_(options), keep_json_(keep_json), rollout_(options.rollout_residual), json_("[") {}

double RolloutCollector::kept_bytes(long tokens, int layers, bool keep_json) {
  constexpr double kMatrices = 4, kTextBytesPerNumber = 16;
  const double cells = static_cast<double>(tokens) * static_cast<double>(tokens);
  return kMatrices * cells * sizeof(double) + (keep_json ? layers * cells * kTextBytesPerNumber : 0.0);
}

std::string RolloutCollector::residual_json() const {
  char text[32];
  const auto end = std::to_chars(text, text + sizeof text, rollout_.residual()).ptr;
  return std::string(text, end);
}

void RolloutCollector::add(const AttentionBlock& block) {
  // An encoder-decoder's first blocks are its encoder's: refused there, before any layer count
  // could be blamed on --layers.
  if (block.encoder_decoder) {
    throw UsageError::bad_option("--rollout", "composes the self-attention layers of one stack (decoder-only models); this "
                                              "encoder-decoder model has an encoder, a decoder and cross-attention between them");
  }
  if (block.kind != "self") {
    throw UsageError::bad_option("--rollout", "is for self-attention models (" + block.stack + " layer " +
                                                  std::to_string(block.layer) + " is cross-attention)");
  }
  if (block.layer != rollout_.layers()) {
    throw UsageError::bad_option("--rollout", "needs every layer from 0 (R_l multiplies Â_l … Â_0), got layer " +
                                                  std::to_string(block.layer) + " after " + std::to_string(rollout_.layers()) +
                                                  " layers; drop --layers");
  }
  const MaskMatrix layer_allowed = block.record.allowed();  // Â_l: a sliding window masks its own layer
  tokens_ = block.record.query_tokens;
  rollout_.add_layer(mean_over_heads(block.record.weights), layer_allowed);
  // The picture of R_l masks what every layer masks (causal, padding), not the last layer's
  // window: through earlier layers, flow reaches keys outside it.
  const MaskMatrix outside = block.record.outside_window();
  allowed_ = outside.size() == 0 ? layer_allowed : MaskMatrix(layer_allowed.cwiseMax(outside));
  const Eigen::MatrixXd& r = rollout_.current();
  last_rows_.push_back(r.row(r.rows() - 1));
  if (keep_json_) {
    json_ += rollout_.layers() == 1 ? "\n    " : ",\n    ";
    append_matrix(json_, r);
  }
}

std::pair<GridRequest, GridRequest> RolloutCollector::requests(const ModelRunInfo& info, double memory_budget) const {
  const int layers = rollout_.layers();
  const std::string last = std::to_string(layers - 1);
  char residual[32];
  std::snprintf(residual, sizeof residual, "%g", rollout_.residual());
  GridRequest top;
  top.query_tokens = top.key_tokens = tokens_;
  top.panels = {share<Matrix>(rollout_.current().cast<Scalar>())};
  top.panel_titles = {"R_" + last + " = \u00C2_" + last + " \u00B7 \u2026 \u00B7 \u00C2_0"};
  top.allowed = share(allowed_);
  top.figure_title = info.model.name + " \u00B7 attention rollout, residual weight " + residual + " \u00B7 " +
                     (options_.measure == "norms" ? "over norms \u2016\u03B1\u00B7f(x)\u2016, rows normalised to sum 1 \u00B7 " : "") +
                     run_text_title(info);
  top.key_axis_title = "input tokens";
  top.query_axis_title = "positions after layer " + last;
  top.colorbar_label = "share of the input (rollout)";
  top.cmap = options_.cmap.empty() ? "viridis" : options_.cmap;
  top.max_size_px = options_.max_size_px;
  top.max_memory_bytes = memory_budget / 2;
  GridRequest strip = top;
  Matrix rows(layers, static_cast<Eigen::Index>(tokens_.size()));
  for (int l = 0; l < layers; ++l) rows.row(l) = last_rows_[static_cast<std::size_t>(l)].cast<Scalar>();
  strip.query_tokens.clear();
  for (int l = 0; l < layers; ++l) strip.query_tokens.push_back("R_" + std::to_string(l));
  strip.panels = {share(std::move(rows))};
  strip.panel_titles = {"last position (" + std::to_string(tokens_.size() - 1) + ") after each layer"};
  strip.allowed = nullptr;
  strip.figure_title.clear();
  strip.query_axis_title = "layer";
  return {std::move(top), std::move(strip)};
}

std::string RolloutCollector::render_png(const ModelRunInfo& info, double memory_budget,
                                         std::vector<std::string>& warnings) const {
  auto [top, strip] = requests(info, memory_budget);
  const FontSet fonts = picture_fonts(options_);
  // The two grids are stacked, so they share --max-size's height. The strip (one row per layer)
  // is drawn first at its own size and the matrix gets the rest: sharing in proportion to the
  // heights each took would shrink the few-row strip to an unlabelled thumbnail (issue 23: a
  // 479-token text gave a 3836 × 44 px strip without labels).
  const int limit = options_.max_size_px;
  RenderedGrid b = render_grid(strip, fonts);
  if (b.image.height_px() > limit / 2) {
    strip.max_height_px = std::max(1, limit / 2);
    b = render_grid(strip, fonts);
  }
  top.max_height_px = std::max(1, limit - b.image.height_px());
  RenderedGrid a = render_grid(top, fonts);
  if (a.image.height_px() + b.image.height_px() > limit) {
    throw LimitError::image_size("rollout.png (two grids stacked)", std::max(a.image.width_px(), b.image.width_px()),
                                 a.image.height_px() + b.image.height_px(), limit, "raise --max-size");
  }
  for (const RenderedGrid* g : {&a, &b})
    for (const std::string& w : g->warnings) warnings.push_back("rollout.png: " + w);
  return encode_png(stack_vertically({a.image, b.image}, kBackground), "rollout.png");
}

}  // namespace attnviz
