#include "render/measure_collector.hpp"

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

// Shortest text that reads back as the same float32, as the dumps write weights.
void append_matrix(std::string& out, const Eigen::MatrixXd& m, const char* indent) {
  out += "[";
  for (Eigen::Index i = 0; i < m.rows(); ++i) {
    out += i == 0 ? "\n" : ",\n";
    out += indent;
    out += "[";
    for (Eigen::Index j = 0; j < m.cols(); ++j) {
      if (j > 0) out += ", ";
      char text[32];
      out.append(text, std::to_chars(text, text + sizeof text, static_cast<float>(m(i, j))).ptr);
    }
    out += "]";
  }
  out += "]";
}

}  // namespace

MeasureCollector::MeasureCollector(const ModelPictureSettings& options)
    : alti_rollout_(options.rollout && options.measure == "alti"), flow_(options.flow) {}

double MeasureCollector::kept_bytes(const ModelPictureSettings& options, long tokens, int layers) {
  constexpr double kTextBytesPerNumber = 16;
  const double cells = static_cast<double>(tokens) * static_cast<double>(tokens);
  double bytes = 0;
  if (options.flow) bytes += layers * cells * (sizeof(double) + 2 * 24.0);  // Â_l and the graph's two edges a cell
  if (options.rollout && options.measure == "alti") bytes += layers * cells * (sizeof(double) + kTextBytesPerNumber);
  return bytes;
}

void MeasureCollector::check_block(const AttentionBlock& block, const char* flag, int expected_layer) const {
  if (block.encoder_decoder || block.kind != "self")
    throw UsageError::bad_option(flag, std::string("composes the self-attention layers of one stack (decoder-only models); ") +
                                           (block.encoder_decoder ? "this encoder-decoder model has two stacks and cross-attention"
                                                                  : "this block is cross-attention"));
  if (block.layer != expected_layer)
    throw UsageError::bad_option(flag, "needs every layer from 0, got layer " + std::to_string(block.layer) + " after " +
                                           std::to_string(expected_layer) + " layers; drop --layers");
}

void MeasureCollector::add(const AttentionBlock& block) {
  if (flow_) {
    check_block(block, "--flow", attention_flow_.layers());
    const long n = static_cast<long>(block.record.query_tokens.size());
    if (n > kMaxFlowTokens)
      throw UsageError::bad_option("--flow", "is limited to " + std::to_string(kMaxFlowTokens) + " tokens (n² max-flow problems over L·n² "
                                             "edges); this run has " + std::to_string(n) + ": use a shorter text, or --rollout");
    allowed_ = block.record.allowed();
    tokens_ = block.record.query_tokens;
    attention_flow_.add_layer(mean_over_heads(block.record.weights), allowed_);
  }
  if (alti_rollout_) {
    check_block(block, "--rollout", rollout_.layers());
    rollout_.add_layer(block.record.alti);
    alti_rollouts_.push_back(rollout_.current());
  }
}

std::vector<std::pair<std::string, std::string>> MeasureCollector::dump_fields() const {
  std::vector<std::pair<std::string, std::string>> fields;
  if (alti_rollout_ && !alti_rollouts_.empty()) {
    std::string text = "[";
    for (std::size_t l = 0; l < alti_rollouts_.size(); ++l) {
      text += l == 0 ? "\n    " : ",\n    ";
      append_matrix(text, alti_rollouts_[l], "      ");
    }
    fields.emplace_back("alti_rollout", text + "\n  ]");
  }
  if (flow_ && attention_flow_.layers() > 0) {
    std::string text;
    append_matrix(text, attention_flow_.flow(), "    ");
    fields.emplace_back("attention_flow", text);
  }
  return fields;
}

std::string MeasureCollector::render_flow_png(const ModelRunInfo& info, const ModelPictureSettings& options, double memory_budget,
                                              std::vector<std::string>& warnings) const {
  GridRequest grid;
  grid.query_tokens = grid.key_tokens = tokens_;
  grid.panels = {share<Matrix>(attention_flow_.flow().cast<Scalar>())};
  const std::string last = std::to_string(attention_flow_.layers() - 1);
  grid.panel_titles = {"max-flow from input j to position i after layer " + last + ", rows sum to 1"};
  grid.allowed = share(allowed_);
  grid.figure_title = info.model.name + " \u00B7 attention flow (Abnar & Zuidema 2020), \u00BD mean_h A + \u00BD I \u00B7 " +
                      run_text_title(info);
  grid.key_axis_title = "input tokens";
  grid.query_axis_title = "positions after layer " + last;
  grid.colorbar_label = "share of the flow";
  grid.cmap = options.cmap.empty() ? "viridis" : options.cmap;
  grid.max_size_px = options.max_size_px;
  grid.max_memory_bytes = memory_budget / 2;
  RenderedGrid rendered = render_grid(grid, picture_fonts(options));
  for (const std::string& w : rendered.warnings) warnings.push_back("flow.png: " + w);
  return encode_png(rendered.image, "flow.png");
}

}  // namespace attnviz
