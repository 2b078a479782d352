#include "render/model_pictures.hpp"

#include <filesystem>
#include <utility>

#include "analysis/measures.hpp"
#include "render/picture_fonts.hpp"

namespace attnviz {

ModelPictures::ModelPictures(const ModelPictureSettings& options, bool encoder_decoder, std::string folder, double memory_budget)
    : options_(options),
      encoder_decoder_(encoder_decoder),
      folder_(std::move(folder)),
      memory_budget_(memory_budget),
      overview_(options),
      rollout_(options, false) {}

void ModelPictures::add(const AttentionBlock& block) {
  if (options_.measure == "norms" && !block.record.norms.empty()) {
    // Overview and rollout read distributions: each row of N normalised to sum 1 (issue 20).
    AttentionBlock rows;
    rows.layer = block.layer;
    rows.stack = block.stack;
    rows.kind = block.kind;
    rows.encoder_decoder = block.encoder_decoder;
    rows.record.mode = block.record.mode;
    rows.record.layer = block.record.layer;
    rows.record.query_tokens = block.record.query_tokens;
    rows.record.key_tokens = block.record.key_tokens;
    rows.record.num_heads = block.record.num_heads;
    rows.record.causal = block.record.causal;
    rows.record.key_mask = block.record.key_mask;
    rows.record.query_mask = block.record.query_mask;
    rows.record.weights = measure_distributions("norms", block.record);
    return add_distributions(rows);
  }
  add_distributions(block);
}

void ModelPictures::add_head(const AttentionBlock& block, int head, const Matrix& weights) {
  if (!encoder_decoder_ || block.kind == "cross") overview_.add_head(block, head, weights);
}

bool ModelPictures::takes_heads(const ModelPictureSettings& options) { return !options.rollout && options.measure == "weights"; }

void ModelPictures::add_distributions(const AttentionBlock& block) {
  if (!encoder_decoder_ || block.kind == "cross") overview_.add(block);
  if (options_.rollout) rollout_.add(block);
}

void ModelPictures::render(const ModelRunInfo& info, OutputSet& files, std::vector<std::string>& warnings) const {
  if (overview_.layers() == 0) return;
  const std::filesystem::path folder(folder_);
  const double budget = memory_budget_;
  files.add((folder / "overview.png").string(), overview_.render_png(info, budget, warnings));
  if (options_.rollout) files.add((folder / "rollout.png").string(), rollout_.render_png(info, budget, warnings));
}

std::vector<ReportView> ModelPictures::report_views(const ModelRunInfo& info) const {
  if (!options_.rollout || rollout_.layers() == 0) return {};
  auto [matrix, strip] = rollout_.requests(info, memory_budget_);
  strip.figure_title = "attention rollout \u00B7 " + strip.panel_titles.front();
  const FontSet fonts = picture_fonts(options_);
  const std::string last = "R_" + std::to_string(rollout_.layers() - 1);
  std::vector<ReportView> views{report_view(matrix, fonts, "rollout " + last, {last}),
                                report_view(strip, fonts, "rollout, last position", {"last position"})};
  for (ReportView& view : views) view.measure = "rollout";
  return views;
}

double ModelPictures::kept_bytes(const ModelPictureSettings& options, long tokens, int layers, int heads, bool by_head) {
  const double head_sum = by_head ? sizeof(Scalar) * static_cast<double>(tokens) * static_cast<double>(tokens) : 0.0;
  return head_sum + OverviewCollector::kept_bytes(options, tokens, layers, heads) +
         (options.rollout ? RolloutCollector::kept_bytes(tokens, layers, false) : 0.0);
}

}  // namespace attnviz
