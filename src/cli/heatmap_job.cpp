#include "cli/heatmap_job.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <limits>

#include "analysis/measures.hpp"
#include "cli/picture_choices.hpp"
#include "core/counted.hpp"
#include "core/error.hpp"
#include "core/utf8.hpp"
#include "model/model_run.hpp"
#include "render/color_scale.hpp"
#include "render/font.hpp"
#include "render/head_grid.hpp"
#include "render/picture_fonts.hpp"
#include "render/picture_formats.hpp"
#include "render/png_batch.hpp"

namespace attnviz {

namespace {

// Below this largest weight, a fixed-scale picture uses less than a tenth of the colour map.
constexpr float kFlatPictureWeight = 0.1f;

// "layer" is "shared" said for a model run, whose every picture is one layer.
ScaleMode scale_mode(const std::string& name) {
  if (name == "fixed") return ScaleMode::Fixed;
  if (name == "head") return ScaleMode::Head;
  if (name == "shared" || name == "layer") return ScaleMode::Shared;
  if (name == "log") return ScaleMode::Log;
  throw UsageError::bad_option("--scale", "expected fixed, head, layer, shared or log, got \"" + name + "\"");
}

// Longest model name shown in a title, in code points: a title must fit above the panels.
constexpr std::size_t kMaxModelNameCodePoints = 60;

// The first `max` code points of UTF-8 `text`, with "…" when something was cut.
std::string shorten(const std::string& text, std::size_t max) {
  const std::u32string code_points = decode_utf8(text);
  if (code_points.size() <= max) return text;
  return encode_utf8(std::u32string_view(code_points).substr(0, max)) + "…";
}


// One request for every image; per-head images reuse it with one panel. Requests borrow the
// record's matrices (the caller keeps the record until the pictures are encoded).
// --rows generated: the first query row drawn, the prompt's length (issue 23); else 0.
int first_drawn_row(const AttentionRecord& record, const Options& options) {
  if (options.rows != "generated") return 0;
  return first_generated_row(record.prompt_length, static_cast<long>(record.query_tokens.size()),
                             record.layer ? "layer " + std::to_string(*record.layer) : std::string("this run"));
}

// The panel of `weights` drawn: the matrix itself, or its rows from `first` on (a copy).
SharedMatrix drawn_rows(const Matrix& weights, int first) {
  return first == 0 ? borrow(weights) : share<Matrix>(weights.bottomRows(weights.rows() - first));
}

// The rows from `first` on of a [n_q] vector (empty stays empty).
template <typename T>
std::vector<T> from_row(const std::vector<T>& v, int first) {
  return v.size() > static_cast<std::size_t>(first) ? std::vector<T>(v.begin() + first, v.end()) : v;
}

GridRequest base_request(const AttentionRecord& record, const SharedMask& allowed, const Options& options,
                         double memory_budget, const std::string& block, const std::string& measure) {
  GridRequest request;
  const int first = first_drawn_row(record, options);
  request.query_tokens = from_row(record.query_tokens, first);
  request.key_tokens = record.key_tokens;
  request.allowed = first == 0 ? allowed : share<MaskMatrix>(allowed->bottomRows(allowed->rows() - first));
  request.query_mask = from_row(record.query_mask, first);
  // With --generate a line marks the prompt's end; --rows generated shows only rows after it.
  request.prompt_query_rows = first == 0 ? record.prompt_length : 0;
  request.prompt_key_cols = record.prompt_length;
  request.first_query_index = first;
  if (first > 0)
    request.query_axis_title = "generated tokens (queries " + std::to_string(first) + "–" +
                               std::to_string(record.query_tokens.size() - 1) + ")";
  if (record.sliding_window > 0) {
    // A sliding-window layer's out-of-window cells get the second hatch and a legend line of
    // their own, so they do not read as causal ones (one record has no "one run only" cells).
    const MaskMatrix outside = record.outside_window();
    request.one_run_masked = first == 0 ? share(outside) : share<MaskMatrix>(outside.bottomRows(outside.rows() - first));
    request.one_run_legend = "cross-hatched: outside the sliding window of " + std::to_string(record.sliding_window) +
                             " tokens (query i sees keys i-" + std::to_string(record.sliding_window) + " < j <= i), not attended";
  }
  if (record.mode == "cross") {
    // The two files' names when queries and keys came from two (SENTENCE and --source); a
    // model run's come from one model, which the title names already.
    const bool two_files = record.inputs.size() >= 2 && record.inputs.front() != record.inputs.back();
    auto file = [](const std::string& path) { return " (" + std::filesystem::path(path).filename().string() + ")"; };
    request.query_axis_title = "queries: target" + (two_files ? file(record.inputs.front()) : std::string());
    request.key_axis_title = "keys: source" + (two_files ? file(record.inputs.back()) : std::string());
  }
  request.figure_title = heatmap_figure_title(record, block, measure);
  request.scale = scale_mode(options.scale);
  if (measure == "norms") {
    // Norms are not in [0, 1]: the fixed scale would clip them, so the default is one shared
    // range over the heads (the colour bar says so).
    if (request.scale == ScaleMode::Fixed) request.scale = ScaleMode::Shared;
    request.colorbar_label = "‖α·f(x)‖₂";
  } else if (measure == "alti") {
    request.colorbar_label = "ALTI contribution";
  }
  request.exclude_sink = options.exclude_sink;
  request.cmap = options.cmap.empty() ? "viridis" : options.cmap;
  request.cols = options.cols;
  request.max_size_px = options.max_size_px;
  request.annotate = options.annotate;
  request.max_memory_bytes = memory_budget;
  return request;
}

// "L3H0", or with an encoder-decoder's block "enc.L3H0" (as the census and compare name heads).
std::string head_name(const AttentionRecord& record, const std::string& block, int head) {
  return (block.empty() ? "" : block + ".") + record.head_name(head);
}

std::string panel_title(const AttentionRecord& record, const std::string& block, int head) {
  return head_name(record, block, head) + " · head " + std::to_string(head) + " of " + std::to_string(record.num_heads);
}

std::string alti_panel_title(const AttentionRecord& record, const std::string& block) {
  return (record.layer ? "layer " + std::to_string(*record.layer) + (block.empty() ? "" : " " + block) + " · " : std::string()) +
         "all heads and the residual, rows sum to 1";
}

// What --measure draws (issue 20): "weights" (the default), "norms" (N^h = ‖α^h f^h(x)‖ per
// head), or "alti" (one map per layer, no heads). "weights" when the record lacks the measure
// (a model's cross-attention block has no ALTI: the caller warns).
std::string drawn_measure(const AttentionRecord& record, const Options& options) {
  if (options.measure == "norms" && !record.norms.empty()) return "norms";
  if (options.measure == "alti" && record.alti.size() != 0) return "alti";
  return "weights";
}

// The words after the kind: "weights", "value-weighted norms ‖α·f(x)‖", "ALTI contributions".
std::string measure_words(const std::string& measure) {
  if (measure == "norms") return "value-weighted norms ‖α·f(x)‖ (Kobayashi et al. 2020)";
  if (measure == "alti") return "ALTI contributions with the residual (Ferrando et al. 2022)";
  return "weights";
}

// "self-attention weights", or the block's own words ("encoder self-attention weights").
std::string kind_words(const AttentionRecord& record, const std::string& block, const std::string& measure = "weights") {
  for (const BlockName& b : block_names())
    if (block == b.name) return std::string(b.description) + " " + measure_words(measure);
  return (record.mode == "cross" ? "cross-attention " : "self-attention ") + measure_words(measure);
}

// The panels of a picture of `record` under `measure`: one per head, or ALTI's one map.
std::vector<const Matrix*> measure_panels(const AttentionRecord& record, const std::string& measure) {
  if (measure == "alti") return {&record.alti};
  std::vector<const Matrix*> panels;
  for (int h = 0; h < record.num_heads; ++h) panels.push_back(measure == "norms" ? &record.norms[h] : &record.weights[h]);
  return panels;
}

// A record read from a file (render) must hold the measure asked for: it is never drawn as
// another in silence. A model's cross-attention block has no ALTI: said in a warning.
void require_measure(const AttentionRecord& record, const Options& options, const std::string& block,
                     std::vector<std::string>& warnings) {
  if (drawn_measure(record, options) == options.measure) return;
  const char* field = options.measure == "norms" ? "norms" : "alti";
  if (options.measure == "alti" && record.mode == "cross" && !block.empty()) {
    warnings.push_back(kNoCrossAlti);
    return;
  }
  const std::string file = record.inputs.empty() ? std::string("the attention") : record.inputs.front();
  throw InputError::missing_field(file, std::string("/") + field,
                                  "--measure " + options.measure + " draws it (write it with attnviz dump --measure " +
                                      options.measure + ")");
}

void keep_new_warnings(const std::vector<std::string>& found, std::vector<std::string>& warnings) {
  for (const std::string& w : found) {
    if (std::find(warnings.begin(), warnings.end(), w) == warnings.end()) warnings.push_back(w);
  }
}

// On the fixed 0–1 scale, long inputs with diffuse heads draw as one flat colour: say so.
void warn_if_flat(float largest, const Options& options, std::vector<std::string>& warnings) {
  if (options.scale != "fixed") return;
  if (largest < kFlatPictureWeight) {
    char text[200];
    std::snprintf(text, sizeof text,
                  "the largest weight is %.3g: on the fixed 0–1 scale every cell looks alike; --scale head or "
                  "--scale shared stretches the colours",
                  largest);
    warnings.push_back(text);
  }
}

// What the budget leaves for each picture drawn at once, after the record; the note says so in
// a limit message. Throws LimitError when nothing is left.
double picture_budget(const AttentionRecord& record, double memory_budget, int workers, std::string& note) {
  const double held = record.memory_bytes();
  const double left = memory_budget - held;
  char text[160];
  std::snprintf(text, sizeof text, " (one of %d pictures drawn at once, sharing what the budget leaves beside %.0f MiB of weights)",
                workers, held / (1024.0 * 1024.0));
  note = text;
  if (left <= 0) {
    throw LimitError::memory("drawing the pictures beside the attention weights", held, memory_budget, "--max-memory MIB");
  }
  return left / workers;
}

// "50", "2.5": std::to_chars's shortest form.
std::string shortest_number(double value) {
  char text[32];
  // A value that is a float32 (the scale the engine used) in float32's shortest form: "0.2".
  const auto single = static_cast<float>(value);
  const char* end = static_cast<double>(single) == value ? std::to_chars(text, text + sizeof text, single).ptr
                                                         : std::to_chars(text, text + sizeof text, value).ptr;
  return std::string(text, static_cast<std::size_t>(end - text));
}

/// The bytes a picture's drawn cells hold (values and mask).
std::size_t drawn_bytes(const DrawnCells& cells) {
  return static_cast<std::size_t>(cells.values.size()) * sizeof(Matrix::Scalar) + static_cast<std::size_t>(cells.allowed.size());
}

}  // namespace

std::string heatmap_figure_title(const AttentionRecord& record, const std::string& block, const std::string& measure) {
  // Without a model name the title starts with the layer or the kind ("self-attention weights"),
  // never with a stand-in word.
  std::string title = record.model.empty() ? std::string() : shorten(record.model, kMaxModelNameCodePoints) + " · ";
  if (record.layer) title += "layer " + std::to_string(*record.layer) + " · ";
  title += kind_words(record, block, measure);
  if (record.causal) title += " · causal mask";
  if (record.sliding_window > 0) title += " · sliding window " + std::to_string(record.sliding_window);
  if (record.logit_softcap > 0) title += " · scores soft-capped at " + shortest_number(record.logit_softcap);
  if (record.no_rope) title += " · NoPE layer (no RoPE)";
  // A scale other than 1/√d_k (Granite's attention multiplier, Gemma's query_pre_attn_scalar).
  if (record.scale > 0 && record.d_k > 0 && std::abs(record.scale * std::sqrt(static_cast<double>(record.d_k)) - 1.0) > 1e-6)
    title += " · scores × " + shortest_number(static_cast<double>(static_cast<float>(record.scale)));
  if (std::find(record.key_mask.begin(), record.key_mask.end(), 0) != record.key_mask.end()) {
    title += " · padding mask";
  }
  if (record.rope) {
    // "×4": std::to_chars's shortest form, so a factor of 2.5 is not shown as 2.500000.
    char factor[32];
    const char* end = std::to_chars(factor, factor + sizeof factor, record.rope->linear_factor).ptr;
    const std::string scaling =
        record.rope->linear_factor != 1.0 ? ", linear scaling ×" + std::string(static_cast<const char*>(factor), end) : std::string();
    title += " · RoPE (" + rope_style_name(record.rope->style) + scaling + ")";
  }
  return title;
}

std::vector<int> drawn_heads(const AttentionRecord& record, const Options& options, const std::string& measure) {
  if (options.heads.empty()) {
    std::vector<int> all(static_cast<std::size_t>(record.num_heads));
    for (int h = 0; h < record.num_heads; ++h) all[static_cast<std::size_t>(h)] = h;
    return all;
  }
  if (measure == "alti")
    throw UsageError::bad_option("--heads", "--measure alti draws one map per layer (every head and the residual mixed), "
                                            "no heads to choose");
  for (int h : options.heads)
    if (h >= record.num_heads)
      throw UsageError::bad_option("--heads", "head " + std::to_string(h) + " does not exist: valid heads are 0–" +
                                                  std::to_string(record.num_heads - 1));
  return options.heads;
}

OutputSet render_heatmaps(const AttentionRecord& record, const Options& options, std::vector<std::string>& warnings,
                          double memory_budget, const std::string& block) {
  require_measure(record, options, block, warnings);
  const std::string measure = drawn_measure(record, options);
  const std::vector<int> heads = drawn_heads(record, options, measure);
  if (measure == "weights") {
    float largest = 0;
    for (int h : heads) largest = std::max(largest, record.weights[static_cast<std::size_t>(h)].maxCoeff());
    warn_if_flat(largest, options, warnings);
  }
  const FontSet fonts = picture_fonts(options);
  const std::filesystem::path folder(options.output);
  OutputSet files;
  files.create_directory(options.output);

  const SharedMask allowed = share(record.allowed());
  GridRequest grid = base_request(record, allowed, options, memory_budget, block, measure);
  const int first = first_drawn_row(record, options);
  const std::vector<const Matrix*> measured = measure_panels(record, measure);
  if (measure == "alti") {
    grid.panels.push_back(drawn_rows(*measured.front(), first));
    grid.panel_titles.push_back(alti_panel_title(record, block));
  }
  for (std::size_t p = 0; measure != "alti" && p < heads.size(); ++p) {
    grid.panels.push_back(drawn_rows(*measured[static_cast<std::size_t>(heads[p])], first));
    grid.panel_titles.push_back(panel_title(record, block, heads[p]));
  }
  GridRequest single = base_request(record, allowed, options, memory_budget, block, measure);
  single.cols = 1;
  // One head alone would get its own min–max; under --scale shared it keeps the grid's range.
  if (single.scale == ScaleMode::Shared) {
    const MaskMatrix& cells = *grid.allowed;
    const MaskMatrix range_cells =
        options.exclude_sink ? without_sink(cells, cells.rows(), cells.cols(), grid.first_query_index) : cells;
    single.range = panel_ranges(grid.panels, range_cells, grid.scale).front();
  }

  const int workers = png_workers(options.threads, heads.size() + 1);
  std::string note;
  grid.max_memory_bytes = single.max_memory_bytes = picture_budget(record, memory_budget, workers, note);
  grid.memory_note = single.memory_note = note;

  // Grid first: it is the largest picture (started first, issue 7) and its warnings come first.
  const std::vector<SharedMatrix> panels = grid.panels;
  std::vector<PngJob> jobs{{std::move(grid), (folder / "grid.png").string()}};
  // ALTI has no heads: its one map is grid.png.
  for (std::size_t p = 0; measure != "alti" && p < heads.size(); ++p) {
    single.panels = {panels[p]};
    single.panel_titles = {panel_title(record, block, heads[p])};
    jobs.push_back({single, (folder / ("head_" + std::to_string(heads[p]) + ".png")).string()});
  }
  if (wants_format(options, "svg")) {
    std::vector<GridRequest> requests;
    std::vector<std::string> paths;
    for (const PngJob& job : jobs) {
      requests.push_back(job.request);
      paths.push_back(job.destination);
    }
    add_svg_pictures(requests, paths, fonts, files, options.threads);
  }
  if (!wants_format(options, "png")) return files;
  std::vector<RenderedPng> pictures = render_pngs(jobs, fonts, options.threads);
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    keep_new_warnings(pictures[i].warnings, warnings);
    files.add(jobs[i].destination, std::move(pictures[i].bytes));
  }
  return files;
}

bool HeadByHeadHeatmaps::applies(const Options& options) {
  return !wants_format(options, "svg") && (options.scale == "fixed" || options.scale == "log") && options.measure == "weights";
}

HeadByHeadHeatmaps::HeadByHeadHeatmaps(const Options& options, double memory_budget, std::string block,
                                       PngPipeline& pictures)
    : options_(options), memory_budget_(memory_budget), block_(std::move(block)), pictures_(pictures) {}

void HeadByHeadHeatmaps::add_head(const AttentionRecord& record, int head, const Matrix& weights) {
  if (head == 0) {
    // As render_heatmaps lays the grid out; its panels are placeholders (a fixed or log scale
    // reads no values) and its cells come head by head, aggregated at the layout's block.
    allowed_ = share(record.allowed());
    grid_ = base_request(record, allowed_, options_, memory_budget_, block_, "weights");
    first_ = first_drawn_row(record, options_);
    drawn_heads_ = drawn_heads(record, options_, "weights");
    for (int h : drawn_heads_) {
      grid_.panels.push_back(share(Matrix()));
      grid_.panel_titles.push_back(panel_title(record, block_, h));
    }
    // As many pictures as the pipeline has workers are in memory at once, whatever the layer.
    std::string note;
    grid_.max_memory_bytes = picture_budget(record, memory_budget_, pictures_.workers(), note);
    grid_.memory_note = note;
    grid_.drawn_block = layout_grid(grid_, pictures_.fonts()).block;
    largest_ = 0;
    heads_.clear();
    held_heads_.clear();
    drawn_cells_.assign(drawn_heads_.size(), nullptr);
  }
  const auto drawn_at = std::find(drawn_heads_.begin(), drawn_heads_.end(), head);
  if (drawn_at == drawn_heads_.end()) return;
  largest_ = std::max(largest_, weights.maxCoeff());
  const SharedMatrix panel = drawn_rows(weights, first_);
  // In --heads' order, which need not be the order the heads come in.
  drawn_cells_[static_cast<std::size_t>(drawn_at - drawn_heads_.begin())] =
      std::make_shared<const DrawnCells>(grid_panel_cells(grid_, *panel, grid_.drawn_block));
  // The whole mask: grid_.allowed holds only the drawn rows (--rows generated), and base_request
  // takes them again.
  GridRequest single = base_request(record, allowed_, options_, memory_budget_, block_, "weights");
  single.cols = 1;
  single.max_memory_bytes = grid_.max_memory_bytes;
  single.memory_note = grid_.memory_note;
  // The picture is made later, on a worker, while `weights` (lent) already holds the next head:
  // it takes its cells drawn now, as grid.png does, and no view of `weights`.
  single.panels = {share(Matrix())};
  single.panel_titles = {panel_title(record, block_, head)};
  single.drawn_block = layout_grid(single, pictures_.fonts()).block;
  single.drawn = {std::make_shared<const DrawnCells>(grid_panel_cells(single, *panel, single.drawn_block))};
  const std::string path = (std::filesystem::path(options_.output) / ("head_" + std::to_string(head) + ".png")).string();
  // Every head has the same shape, so the first drawn decides for the layer: all held or none.
  if (heads_.empty() && held_heads_.empty())
    hold_heads_ = drawn_bytes(*single.drawn.front()) * drawn_heads_.size() <= kHeldHeadBytes;
  if (hold_heads_) {
    // Held until the grid is handed in, so that the grid, six times a head's picture, starts
    // first and the heads fill the other workers: the last layer then ends on a head's picture
    // rather than on the grid alone (issue 38's tail).
    held_heads_.push_back(PngJob{std::move(single), path});
    return;
  }
  heads_.emplace_back(path, pictures_.submit(PngJob{std::move(single), path}));
}

PendingPictures HeadByHeadHeatmaps::finish() {
  PendingPictures pending;
  pending.folder = options_.output;
  warn_if_flat(largest_, options_, pending.warnings);
  const std::string path = (std::filesystem::path(options_.output) / "grid.png").string();
  grid_.drawn = std::move(drawn_cells_);
  drawn_cells_.clear();
  pending.pictures.emplace_back(path, pictures_.submit(PngJob{std::move(grid_), path}));
  pending.pictures.insert(pending.pictures.end(), heads_.begin(), heads_.end());  // empty when held
  for (PngJob& job : held_heads_) {
    std::string head_path = job.destination;
    pending.pictures.emplace_back(std::move(head_path), pictures_.submit(std::move(job)));
  }
  grid_ = GridRequest();
  heads_.clear();
  held_heads_.clear();
  return pending;
}

OutputSet take_pictures(PngPipeline& pipeline, const PendingPictures& pending, std::vector<std::string>& warnings) {
  warnings.insert(warnings.end(), pending.warnings.begin(), pending.warnings.end());
  OutputSet files;
  files.create_directory(pending.folder);
  // Taken in the order render_heatmaps writes them, so the first failure and the warnings'
  // order are its own.
  for (const auto& [path, ticket] : pending.pictures) {
    RenderedPng picture = pipeline.take(ticket);
    keep_new_warnings(picture.warnings, warnings);
    files.add(path, std::move(picture.bytes));
  }
  warnings.insert(warnings.end(), pending.warnings_after.begin(), pending.warnings_after.end());
  return files;
}

ReportView heatmap_report_view(const AttentionRecord& record, const Options& options, std::string name,
                               double memory_budget, const std::string& block) {
  const double values = static_cast<double>(record.num_heads) * static_cast<double>(record.query_tokens.size()) *
                        static_cast<double>(record.key_tokens.size());
  if (record.memory_bytes() + values * kReportBytesPerValue > memory_budget) {
    throw LimitError::memory("the HTML report of " + std::to_string(record.num_heads) + " heads x " +
                                 std::to_string(record.query_tokens.size()) + " x " + std::to_string(record.key_tokens.size()) +
                                 " weights beside the weights themselves",
                             record.memory_bytes() + values * kReportBytesPerValue, memory_budget, "--max-memory MIB");
  }
  const FontSet fonts = picture_fonts(options);
  std::vector<std::string> unused;
  require_measure(record, options, block, unused);
  const std::string measure = drawn_measure(record, options);
  GridRequest grid =
      base_request(record, share(record.allowed()), options, std::numeric_limits<double>::infinity(), block, measure);
  std::vector<std::string> names;
  const int first = first_drawn_row(record, options);
  const std::vector<const Matrix*> measured = measure_panels(record, measure);
  for (std::size_t p = 0; p < measured.size(); ++p) {
    const int h = static_cast<int>(p);
    grid.panels.push_back(drawn_rows(*measured[p], first));
    grid.panel_titles.push_back(measure == "alti" ? alti_panel_title(record, block) : panel_title(record, block, h));
    names.push_back(measure == "alti" ? "ALTI" : head_name(record, block, h));
  }
  ReportView view = report_view(grid, fonts, std::move(name), names);
  view.measure = measure;
  return view;
}

std::vector<ReportView> heatmap_report_views(const AttentionRecord& record, const Options& options, const std::string& name,
                                             double memory_budget, const std::string& block) {
  std::vector<ReportView> views;
  views.push_back(heatmap_report_view(record, options, name, memory_budget, block));
  // Every other measure the record holds (a dump written with --measure norms, rendered without
  // it, still offers its norms), weights always.
  const bool held[] = {true, !record.norms.empty(), record.alti.size() != 0};
  const char* const names[] = {"weights", "norms", "alti"};
  for (int m = 0; m < 3; ++m) {
    if (!held[m] || views.front().measure == names[m]) continue;
    Options other = options;
    other.measure = names[m];
    views.push_back(heatmap_report_view(record, other, name, memory_budget, block));
  }
  return views;
}

}  // namespace attnviz
