#include "cli/run.hpp"

#include <Eigen/Core>
#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <optional>
#include <iostream>
#include <ostream>
#include <set>

#include "cli/attention_job.hpp"
#include "cli/model_path.hpp"
#include "cli/text_input.hpp"
#include "cli/attribute_job.hpp"
#include "cli/chat_prompt.hpp"
#include "cli/serve_command.hpp"
#include "cli/compare_job.hpp"
#include "cli/corpus_job.hpp"
#include "cli/explain_job.hpp"
#include "cli/head_stream.hpp"
#include "cli/heatmap_job.hpp"
#include "cli/model_compare_job.hpp"
#include "cli/model_job.hpp"
#include "cli/output_kind.hpp"
#include "cli/picture_choices.hpp"
#include "cli/profile.hpp"
#include "cli/report_heads.hpp"
#include "cli/stale_outputs.hpp"
#include "core/counted.hpp"
#include "core/error.hpp"
#include "io/atomic_output.hpp"
#include "io/file_text.hpp"
#include "io/json_file.hpp"
#include "records/model_dump.hpp"
#include "records/record_json.hpp"
#include "records/safetensors_dump.hpp"
#include "render/grid_notes.hpp"
#include "render/html_report.hpp"
#include "render/measure_collector.hpp"
#include "render/model_pictures.hpp"
#include "render/picture_fonts.hpp"
#include "render/picture_formats.hpp"
#include "render/png_pipeline.hpp"
#include "render/rollout_collector.hpp"

namespace attnviz {

std::vector<std::string> input_files(const Options& options) {
  std::vector<std::string> inputs = {options.sentence, options.weights, options.source, options.model,
                                     options.messages_file};
  inputs.insert(inputs.end(), options.fonts.begin(), options.fonts.end());
  if (!options.tokenizer.empty()) inputs.push_back(options.tokenizer);
  if (options.text_file && *options.text_file != "-") inputs.push_back(*options.text_file);
  // A model folder (CTranslate2, Hugging Face) is read file by file: model.bin, config.json,
  // the vocabularies, shards. None of them may be replaced by an output.
  std::error_code ec;
  if (!options.model.empty() && std::filesystem::is_directory(options.model, ec)) {
    for (const auto& entry : std::filesystem::directory_iterator(options.model, ec)) {
      if (entry.is_regular_file(ec)) inputs.push_back(entry.path().string());
    }
  }
  return inputs;
}

namespace {

// -o - : dump's JSON goes to standard output, and every message to standard error.
constexpr const char* kStandardOutput = "-";

bool to_standard_output(const Options& options) { return options.output == kStandardOutput; }

// Messages quote tokens and paths as given; control characters (a newline, ESC of a terminal
// sequence) are shown escaped so every message stays one harmless line.
// `keep_lines` keeps newlines and tabs as they are, for text shown as text (a continuation).
std::string printable(const std::string& text, bool keep_lines = false) {
  std::string shown;
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (keep_lines && (c == '\n' || c == '\t')) {
      shown += c;
    } else if (byte < 0x20 || byte == 0x7f) {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\x%02x", byte);
      shown += escaped;
    } else {
      shown += c;
    }
  }
  return shown;
}

// What the model wrote (--generate, or a translation), so that the user sees it without opening
// the dump or the pictures.
void print_continuation(const ModelRunInfo& info, std::ostream& out) {
  if (info.generated_text.empty()) return;
  // A continuation is text: printed verbatim on the lines after "generated:" (issue 23), only
  // terminal control characters escaped. A translation is one word of the target vocabulary.
  if (info.source_tokens.empty()) {
    out << "generated:\n" << printable(info.generated_text, true) << "\n";
    return;
  }
  out << "translation: \"" << printable(info.generated_text) << "\"\n";
}

// Attention weights of `layers` blocks of `heads` heads over `tokens` tokens (h·n² a block).
double attention_values(long tokens, int layers, int heads) {
  return static_cast<double>(layers) * heads * static_cast<double>(tokens) * static_cast<double>(tokens);
}

// Each warning once: a run's pictures repeat notes (compare draws the weights and their
// differences over the same tokens), and a character no font has is reported by the first
// picture that has it, whichever text it is in (issue 24: one emoji, two warnings).
void print_warnings(const std::vector<std::string>& warnings, std::ostream& err) {
  std::set<std::string> said;
  for (const std::string& w : warnings) {
    const std::string code = missing_glyph_code(w);
    if (!said.insert(code.empty() ? w : code).second) continue;
    err << "attnviz: warning: " << printable(w) << "\n";
  }
}

void require_output(const Options& options, const char* what) {
  if (options.output.empty()) throw UsageError::bad_option("-o", std::string("required: ") + what);
}

// Writes a dump's text: to standard output for -o -, else as a file through OutputSet (which
// refuses replacing an input).
void write_dump(const Options& options, std::vector<std::string> pieces, std::ostream& out) {
  if (to_standard_output(options)) {
    for (const std::string& piece : pieces) out << piece;
    return;
  }
  OutputSet files;
  files.protect(input_files(options));
  files.add(options.output, std::move(pieces));
  files.commit();
}

std::string output_name(const Options& options) {
  return to_standard_output(options) ? "standard output" : options.output;
}

// The extension of `path`, lower case ("" when none).
std::string extension_of(const std::string& path) {
  std::string extension = std::filesystem::path(path).extension().string();
  for (char& c : extension) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return extension;
}

// dump writes safetensors for --format safetensors, or by default for -o *.safetensors.
bool writes_safetensors(const Options& options) {
  return options.dump_format == "safetensors" || (options.dump_format.empty() && extension_of(options.output) == ".safetensors");
}

bool wants_z(const Options& options) {
  return std::find(options.activations.begin(), options.activations.end(), "z") != options.activations.end();
}

// What the run's blocks carry for the dump: z without --outputs keeps the heads' outputs only.
void trim_to_request(const Options& options, AttentionBlock& block) {
  if (!options.outputs && wants_z(options)) block.record.output = Matrix();
}

// The JSON dump holds at most this much of --activations as float32 (issue 36): past it, text
// is the wrong container; safetensors writes any size.
constexpr double kMaxJsonActivationBytes = 64.0 * 1024 * 1024;

std::string mib_text(double bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f MiB", bytes / (1024.0 * 1024.0));
  return text;
}

// Refused before the forward pass, from the model's shape and the run's: resid_* and *_out are
// [n, d_model] a layer, z h × [n, d_k].
void refuse_large_json_activations(const Options& options, const ModelSummary& model, long tokens, int layers) {
  const double matrices = static_cast<double>(options.activations.size()) - (wants_z(options) ? 1.0 : 0.0);
  const double per_token = matrices * static_cast<double>(model.d_model) +
                           (wants_z(options) ? static_cast<double>(model.num_heads) * static_cast<double>(model.d_k) : 0.0);
  const double bytes = 4.0 * per_token * static_cast<double>(tokens) * layers;
  if (bytes <= kMaxJsonActivationBytes) return;
  throw UsageError::bad_option("--activations", mib_text(bytes) + " of float32 values (" + std::to_string(layers) + " layers x " +
                                                    std::to_string(tokens) + " positions) is over the JSON dump's 64 MiB; write them "
                                                    "as safetensors: -o " +
                                                    std::filesystem::path(options.output).replace_extension(".safetensors").string() +
                                                    " (or --format safetensors)");
}

void print_model_dump_line(const Options& options, const ModelRunInfo& info, std::size_t blocks, std::ostream& out);

// dump --model -o FILE.safetensors: each block's tensors written as it comes (layer by layer,
// nothing of it held after), the header last; renamed into place when complete.
void run_model_safetensors(const Options& options, PhaseTimer& timer, std::ostream& out, std::vector<std::string>& warnings) {
  OutputSet files;
  files.protect(input_files(options));
  SafetensorsDumpWriter writer(files.stream_ahead(options.output), options.output, is_encoder_decoder_model(options));
  RolloutCollector rollout(options, true);
  MeasureCollector measures(options);
  double write_seconds = 0;
  const BlockSink sink = [&](AttentionBlock&& block) {
    const auto start = std::chrono::steady_clock::now();
    trim_to_request(options, block);
    writer.add(block);
    write_seconds += seconds_since(start);
    if (options.rollout) rollout.add(block);
    if (measures.active()) measures.add(block);
  };
  const KeptBytes kept = [&](long tokens, int layers, int) {
    writer.plan(tokens, layers);
    return (options.rollout ? RolloutCollector::kept_bytes(tokens, layers, true) : 0.0) +
           MeasureCollector::kept_bytes(options, tokens, layers);
  };
  // Head by head where nothing else reads a whole layer (issue 23): one head's n² weights held,
  // as heatmaps holds, whatever the layer's size.
  const bool by_head = !options.rollout && !measures.active() && options.measure == "weights" && !options.scores &&
                       !options.outputs && options.activations.empty();
  const HeadSink heads = [&](const AttentionBlock& block, int head, Matrix& weights) {
    const auto start = std::chrono::steady_clock::now();
    writer.add_head(block, head, weights);
    write_seconds += seconds_since(start);
  };
  const ModelRunInfo info = run_model(options, sink, warnings, memory_budget_bytes(options), kept, nullptr, by_head ? &heads : nullptr);
  if (options.rollout) {
    writer.add_field("rollout_residual", rollout.residual_json());
    writer.add_field("rollout", rollout.json_text());
  }
  for (auto& [name, text] : measures.dump_fields()) writer.add_field(name, text);
  timer.lap("compute", write_seconds);
  writer.finish(info, options.logits);
  timer.lap("render");
  files.commit();
  timer.lap("write");
  print_model_dump_line(options, info, writer.layer_count(), out);
}

void run_model_dump(const Options& options, PhaseTimer& timer, std::ostream& data, std::ostream& out,
                    std::vector<std::string>& warnings) {
  require_output(options, "the dump file to write");
  if (writes_safetensors(options)) return run_model_safetensors(options, timer, out, warnings);
  ModelDumpWriter writer;
  RolloutCollector rollout(options, true);
  MeasureCollector measures(options);
  ModelSummary model_shape;  // for --activations' size, known before the pass (ModelProbe::check)
  ModelProbe probe;
  probe.check = [&model_shape](const ModelSummary& model) { model_shape = model; };
  // Each layer is formatted as soon as it is computed (one layer's weights held at a time); the
  // formatting counts as `render`, so that `compute` is the model's load, forward pass and capture.
  double format_seconds = 0;
  const BlockSink sink = [&](AttentionBlock&& block) {
    const auto start = std::chrono::steady_clock::now();
    trim_to_request(options, block);
    writer.add(block);
    format_seconds += seconds_since(start);
    if (options.rollout) rollout.add(block);
    if (measures.active()) measures.add(block);
  };
  // Every layer's text is held until the file is written: at most kMaxDumpBytesPerNumber a weight
  // (norms: N of every head besides the weights, and the layer's norms).
  const double stacks = 1.0 + (options.scores ? 1.0 : 0.0) + (options.measure == "norms" ? 1.5 : 0.0);
  const KeptBytes kept = [&](long tokens, int layers, int heads) {
    if (!options.activations.empty()) refuse_large_json_activations(options, model_shape, tokens, layers);
    return attention_values(tokens, layers, heads) * kMaxDumpBytesPerNumber * stacks +
           (options.rollout ? RolloutCollector::kept_bytes(tokens, layers, true) : 0.0) +
           MeasureCollector::kept_bytes(options, tokens, layers);
  };
  const ModelRunInfo info = run_model(options, sink, warnings, memory_budget_bytes(options), kept, &probe);
  if (options.rollout) {
    writer.add_field("rollout_residual", rollout.residual_json());
    writer.add_field("rollout", rollout.json_text());
  }
  for (auto& [name, text] : measures.dump_fields()) writer.add_field(name, std::move(text));
  timer.lap("compute", format_seconds);
  std::vector<std::string> pieces = writer.finish(info, options.logits);
  timer.lap("render");
  write_dump(options, std::move(pieces), data);
  timer.lap("write");
  print_model_dump_line(options, info, writer.layer_count(), out);
}

void print_model_dump_line(const Options& options, const ModelRunInfo& info, std::size_t blocks, std::ostream& out) {
  out << "wrote " << output_name(options) << ": " << counted(static_cast<long long>(blocks), "attention block") << " of "
      << printable(info.model.name) << " over "
      << (info.source_tokens.empty()
              ? counted(static_cast<long long>(info.token_ids.size()), "token")
              : counted(static_cast<long long>(info.source_tokens.size()), "source token") + " and " +
                    counted(static_cast<long long>(info.target_tokens.size()), "target token"))
      << "\n";
  print_continuation(info, out);
}

std::string report_path(const Options& options) { return (std::filesystem::path(options.output) / "index.html").string(); }

// A block's PNG and SVG files go to their own folder below -o; with --format html its view joins
// `page` (index.html in -o shows every block). Nothing is written until the set is committed.
void render_block(const AttentionBlock& block, bool encoder_decoder, const Options& options, OutputSet& files,
                  ReportPage& page, std::vector<std::string>& warnings) {
  const std::string folder = block_folder(block, encoder_decoder);
  if (wants_format(options, "png") || wants_format(options, "svg")) {
    Options per_block = options;
    per_block.output = (std::filesystem::path(options.output) / folder).string();
    files.append(render_heatmaps(block.record, per_block, warnings, memory_budget_bytes(options), block.block_name()));
  }
  if (wants_format(options, "html")) {
    for (ReportView& view :
         heatmap_report_views(block.record, options, view_name(folder), memory_budget_bytes(options), block.block_name()))
      page.views.push_back(std::move(view));
  }
}

// Every other file of the run, relative to the page: the whole-model pictures beside it first
// (overview.png, rollout.png, flow.png), then the per-layer files in their folders.
void link_run_files(const Options& options, const OutputSet& files, ReportPage& page) {
  std::vector<ReportLink> nested;
  for (const std::string& path : files.paths()) {
    const std::string href = std::filesystem::path(path).lexically_relative(options.output).generic_string();
    if (href.empty() || href == "index.html") continue;
    if (href.find('/') != std::string::npos) {
      nested.push_back({href, href});
      continue;
    }
    const std::string what = href == "overview.png" ? " (every layer \u00D7 head)"
                             : href == "rollout.png" ? " (attention rollout)"
                             : href == "flow.png"    ? " (attention flow)"
                                                     : "";
    page.links.push_back({href, href + what});
  }
  page.main_links = page.links.size();
  page.links.insert(page.links.end(), nested.begin(), nested.end());
}

void add_model_report(const ModelRunInfo& info, ReportPage& page, const ModelPictures& pictures, const Options& options,
                      OutputSet& files) {
  files.create_directory(options.output);
  if (!wants_format(options, "html")) return;
  link_run_files(options, files, page);
  for (ReportView& view : pictures.report_views(info)) page.views.push_back(std::move(view));
  // With --measure norms|alti each block has two views (the measure and the weights).
  const std::size_t blocks = page.views.empty() ? 0 : static_cast<std::size_t>(std::count_if(
      page.views.begin(), page.views.end(), [&](const ReportView& v) { return v.measure == page.views.front().measure; }));
  page.title = model_report_title(info, blocks);
  page.layered = true;
  if (info.source_tokens.empty() && info.prompt_length < static_cast<int>(info.tokens.size())) page.prompt_length = info.prompt_length;
  for (const ChatTurnSpan& turn : info.chat_turns) page.turns.push_back(ReportTurn{turn.role, turn.first, turn.end});
  page.turns_note = info.chat_turns_note;
  files.add(report_path(options), html_report(page));
}

void run_model_pictures(const Options& options, PhaseTimer& timer, std::ostream& out, std::vector<std::string>& warnings) {
  require_output(options, "the folder for the PNG files");
  const bool encoder_decoder = is_encoder_decoder_model(options);
  OutputSet files;
  files.protect(input_files(options));
  ReportPage page;
  std::size_t blocks = 0;
  ModelPictures model_pictures(options, encoder_decoder, options.output, memory_budget_bytes(options));
  MeasureCollector measures(options);
  // Each layer is drawn as soon as it is computed and then let go: only the pictures stay (and,
  // for the HTML report, the weights as float32), with what the overview and rollout keep.
  double draw_seconds = 0;  // counted as `render`, though done inside the forward pass
  const BlockSink whole = [&](AttentionBlock&& block) {
    const auto start = std::chrono::steady_clock::now();
    render_block(block, encoder_decoder, options, files, page, warnings);
    model_pictures.add(block);
    if (measures.active()) measures.add(block);
    draw_seconds += seconds_since(start);
    ++blocks;
  };
  // Head by head where every picture allows it (issue 23): a head is drawn and folded into the
  // overview as it comes, so a layer's weights are never all held.
  const bool by_head = HeadByHeadHeatmaps::applies(options) && ModelPictures::takes_heads(options) && !measures.active();
  // One font set and one picture pipeline for every layer's pictures, made at the first head:
  // a head's picture is drawn and encoded while the next heads come (issue 38).
  std::optional<FontSet> fonts;
  std::optional<PngPipeline> pictures;
  std::optional<HeadByHeadHeatmaps> heatmaps;
  // A layer's pictures are taken when the next layer closes (or the run ends), so that its grid,
  // the largest picture, is made while the next layer's heads are (issue 38).
  std::optional<PendingPictures> previous;
  ReportHeads report;  // --format html: each head as the page shows it (pooled past kReportMaxSide tokens)
  const bool png = wants_format(options, "png"), html = wants_format(options, "html");
  const HeadSink head_sink = [&](const AttentionBlock& block, int head, Matrix& weights) {
    const auto start = std::chrono::steady_clock::now();
    if (head == 0 && png) {
      Options per_block = options;
      per_block.output = (std::filesystem::path(options.output) / block_folder(block, encoder_decoder)).string();
      if (!pictures) {
        fonts.emplace(picture_fonts(options));
        pictures.emplace(*fonts, png_workers(options.threads, std::numeric_limits<std::size_t>::max()));
      }
      heatmaps.emplace(per_block, memory_budget_bytes(options), block.block_name(), *pictures);
    }
    if (png) heatmaps->add_head(block.record, head, weights);
    if (html) report.add_head(block.record, head, weights);
    model_pictures.add_head(block, head, weights);
    draw_seconds += seconds_since(start);
  };
  const BlockSink closed = [&](AttentionBlock&& block) {
    const auto start = std::chrono::steady_clock::now();
    std::optional<PendingPictures> layer;
    if (heatmaps) layer = heatmaps->finish();
    heatmaps.reset();
    if (html)
      for (ReportView& view : report.finish(block.record, options, view_name(block_folder(block, encoder_decoder)),
                                            memory_budget_bytes(options), block.block_name()))
        page.views.push_back(std::move(view));
    // This layer's warnings follow its pictures', which are taken later.
    std::vector<std::string>& layer_warnings = layer ? layer->warnings_after : warnings;
    if (html && report.pooled_block() > 1) {  // said on the page, and here
      const std::string b = std::to_string(report.pooled_block());
      layer_warnings.push_back("index.html: each cell shows the max over " + b + " \u00D7 " + b + " tokens (" +
                         std::to_string(block.record.query_tokens.size()) + " tokens; the page holds at most " +
                         std::to_string(report.max_side()) + " cells a side)");
    }
    if (previous) {
      files.append(take_pictures(*pictures, *previous, warnings));
      // Written now, under temporary names, while the workers make this layer's pictures: the
      // end of the run only renames them (issue 38).
      files.write_ahead();
    }
    previous = std::move(layer);
    model_pictures.add(block);
    draw_seconds += seconds_since(start);
    ++blocks;
  };
  const BlockSink split = split_heads(head_sink, closed);
  // The report keeps every layer's weights until the page is written (kReportBytesPerValue each).
  const KeptBytes kept = [&](long tokens, int layers, int heads) {
    const double values = by_head ? ReportHeads::kept_values(tokens, layers, heads) : attention_values(tokens, layers, heads);
    const double report_bytes = wants_format(options, "html") ? values * kReportBytesPerValue : 0.0;
    return ModelPictures::kept_bytes(options, tokens, layers, heads, by_head) + report_bytes + MeasureCollector::kept_bytes(options, tokens, layers);
  };
  const ModelRunInfo info = run_model(options, by_head ? split : whole, warnings, memory_budget_bytes(options), kept, nullptr,
                                      by_head ? &head_sink : nullptr);
  timer.lap("compute", draw_seconds);
  // The overview is drawn here while the workers finish the last layer's pictures; its file and
  // warnings still follow theirs.
  OutputSet overview_files;
  std::vector<std::string> overview_warnings;
  model_pictures.render(info, overview_files, overview_warnings);
  if (previous) files.append(take_pictures(*pictures, *previous, warnings));
  files.append(std::move(overview_files));
  warnings.insert(warnings.end(), overview_warnings.begin(), overview_warnings.end());
  if (options.flow)
    files.add((std::filesystem::path(options.output) / "flow.png").string(),
              measures.render_flow_png(info, options, memory_budget_bytes(options), warnings));
  add_model_report(info, page, model_pictures, options, files);
  timer.lap("render");
  commit_folder(files, options.output, warnings);
  timer.lap("write");
  out << "wrote " << files_written(options, files.paths().size()) << " to " << options.output << "/ ("
      << counted(static_cast<long long>(blocks), "attention block")
      << (pictures_written(options) == "index.html" ? " in index.html" : ", one folder each: " + pictures_written(options))
      << "; overview.png" << (options.rollout ? ", rollout.png" : "") << (options.flow ? ", flow.png" : "") << ")\n";
  print_continuation(info, out);
}

void run_render_model_dump(ModelDump dump, const Options& options, PhaseTimer& timer, std::ostream& out,
                           std::vector<std::string>& warnings) {
  timer.lap("load");
  timer.lap("compute");
  const bool encoder_decoder = !dump.info.source_tokens.empty();
  OutputSet files;
  ReportPage page;
  ModelPictures model_pictures(options, encoder_decoder, options.output, memory_budget_bytes(options));
  for (AttentionBlock& block : dump.blocks) {
    if (!encoder_decoder && dump.info.prompt_length < static_cast<int>(block.record.query_tokens.size()))
      block.record.prompt_length = dump.info.prompt_length;  // the continuation's rows are marked
    render_block(block, encoder_decoder, options, files, page, warnings);
    model_pictures.add(block);
  }
  model_pictures.render(dump.info, files, warnings);
  add_model_report(dump.info, page, model_pictures, options, files);
  files.protect(input_files(options));
  timer.lap("render");
  commit_folder(files, options.output, warnings);
  timer.lap("write");
  out << "wrote " << files_written(options, files.paths().size()) << " to " << options.output << "/ ("
      << counted(static_cast<long long>(dump.blocks.size()), "attention block") << ", one folder each; overview.png" << (options.rollout ? ", rollout.png" : "") << ")\n";
}

// An output file that is one of the run's inputs is refused before any work (OutputSet::commit
// refuses it again at the end, for outputs named only then): a model run may take minutes.
void refuse_inputs_as_outputs(const Options& options) {
  const std::vector<std::string> inputs = input_files(options);
  for (const std::string* output : {&options.output, &options.census, &options.stats}) {
    std::error_code ec;
    if (!output->empty() && std::filesystem::is_regular_file(*output, ec)) refuse_input_as_output(*output, inputs);
  }
}

// An output whose folder can never be made (a file where a folder must be: heatmaps -o FILE,
// dump -o FILE/x.json) is refused before any work, as OutputSet::commit would refuse it after.
void refuse_unmakeable_folders(const Options& options) {
  const bool writes_folder = options.command == Command::Heatmaps || options.command == Command::Render ||
                             options.command == Command::Attribute || options.command == Command::Explain;
  if (!options.output.empty() && !to_standard_output(options)) {
    const std::string folder = writes_folder ? options.output : std::filesystem::path(options.output).parent_path().string();
    require_creatable_folder(folder, options.output);
  }
  for (const std::string* file : {&options.census, &options.stats}) {
    if (!file->empty()) require_creatable_folder(std::filesystem::path(*file).parent_path().string(), *file);
  }
}

void run_dump(const Options& options, PhaseTimer& timer, std::ostream& data, std::ostream& out,
              std::vector<std::string>& warnings) {
  require_output(options, "the dump file to write");
  const AttentionRecord record = compute_record(options, warnings, &timer);
  timer.lap("compute");
  if (writes_safetensors(options)) {
    OutputSet files;
    files.protect(input_files(options));
    write_record_safetensors(record, files.stream_ahead(options.output), options.output);
    timer.lap("render");
    files.commit();
    timer.lap("write");
    out << "wrote " << options.output << ": " << counted(record.num_heads, "head") << " x "
        << counted(static_cast<long long>(record.query_tokens.size()), "query", "queries") << " x "
        << counted(static_cast<long long>(record.key_tokens.size()), "key") << "\n";
    return;
  }
  std::vector<std::string> pieces;
  pieces.push_back(record_to_json(record));
  timer.lap("render");
  write_dump(options, std::move(pieces), data);
  timer.lap("write");
  out << "wrote " << output_name(options) << ": " << counted(record.num_heads, "head") << " x "
      << counted(static_cast<long long>(record.query_tokens.size()), "query", "queries") << " x "
      << counted(static_cast<long long>(record.key_tokens.size()), "key") << "\n";
}

void run_pictures(const Options& options, PhaseTimer& timer, std::ostream& out, std::vector<std::string>& warnings) {
  require_output(options, "the folder for the PNG files");
  FileText text;
  if (options.command == Command::Render) {
    text = read_dump_text(options.sentence, memory_budget_bytes(options));
    if (is_model_dump_text(text))
      return run_render_model_dump(read_model_dump(text, options.sentence, warnings), options, timer, out, warnings);
  }
  std::optional<AttentionRecord> stored;  // a safetensors dump's layer
  if (options.command == Command::Render && is_safetensors_text(text)) {
    SafetensorsDump dump = read_safetensors_dump(std::move(text), options.sentence, warnings);
    if (dump.model) return run_render_model_dump(std::move(*dump.model), options, timer, out, warnings);
    stored = std::move(dump.record);
  }
  if (options.rollout) throw UsageError::bad_option("--rollout", "needs a whole model: --model FILE, or a model dump to render");
  const AttentionRecord record = stored                                ? std::move(*stored)
                                 : options.command == Command::Render ? read_record(text, options.sentence, warnings)
                                                                      : compute_record(options, warnings, &timer);
  if (options.command == Command::Render) timer.lap("load");  // render has no maths: compute is empty,
  timer.lap("compute");                                       // printed so every command has the phases
  OutputSet files;
  files.create_directory(options.output);
  if (wants_format(options, "png") || wants_format(options, "svg")) {
    files.append(render_heatmaps(record, options, warnings, memory_budget_bytes(options)));
  }
  if (wants_format(options, "html")) {
    std::vector<ReportView> views = heatmap_report_views(record, options, "layer", memory_budget_bytes(options));
    const std::string title = views.front().figure_title;
    files.add(report_path(options), html_report(ReportPage{title, std::move(views), false}));
  }
  files.protect(input_files(options));
  timer.lap("render");
  commit_folder(files, options.output, warnings);
  timer.lap("write");
  out << "wrote " << files_written(options, files.paths().size()) << " to " << options.output << "/ ("
      << pictures_written(options) << ")\n";
}

// --cmap colours attention weights (compare's differences always use rdbu). rdbu is diverging,
// centred on 0 for signed data; weights are never negative, so its blue half is never used.
void warn_if_diverging_cmap(const Options& options, std::vector<std::string>& warnings) {
  if (options.cmap != "rdbu") return;
  warnings.push_back("--cmap rdbu is a diverging map for signed data (negative blue, 0 white, positive red); "
                     "attention weights are never negative, so only its white-to-red half is used; a sequential "
                     "map (viridis, magma, greys, blues) shows them better");
}

// `data` is standard output, for what a command prints as its result (tokenize, dump -o -);
// `out` is where its messages go (standard error when the data took standard output).
void dispatch(const Options& options, PhaseTimer& timer, std::ostream& data, std::ostream& out, std::ostream& err,
              std::vector<std::string>& warnings) {
  if (options.command == Command::Census) {
    check_output_kind(options);
    return run_corpus_census(options, out, err, warnings);
  }
  if (options.command == Command::Serve) return run_serve(options, out, err, warnings);
  if (options.command == Command::Tokenize) {
    if (!options.text) throw UsageError::bad_option("tokenize", "needs the text: --text \"...\", or a conversation with --chat/--messages");
    data << tokenize_report(options, warnings);
    return;
  }
  check_output_kind(options);
  refuse_inputs_as_outputs(options);
  refuse_unmakeable_folders(options);
  warn_if_diverging_cmap(options, warnings);
  check_picture_choices(options);
  if (options.command == Command::Attribute) return run_attribute(options, timer, out, warnings);
  if (options.command == Command::Explain) {
    if (!is_model_run(options)) check_layer_run_options(options);
    return run_explain(options, timer, out, warnings);
  }
  if (options.command != Command::Render) {
    if (is_model_run(options)) {
      if (options.command == Command::Dump) return run_model_dump(options, timer, data, out, warnings);
      if (options.command == Command::Heatmaps) return run_model_pictures(options, timer, out, warnings);
      return run_model_compare(options, timer, out, warnings);
    }
    check_layer_run_options(options);
  }
  switch (options.command) {
    case Command::Dump: return run_dump(options, timer, data, out, warnings);
    case Command::Heatmaps:
    case Command::Render: return run_pictures(options, timer, out, warnings);
    case Command::Compare: return run_compare(options, timer, out, warnings);
    case Command::Tokenize:
    case Command::Attribute:
    case Command::Census:
    case Command::Serve:
    case Command::Explain: return;
  }
}

}  // namespace

std::string model_report_title(const ModelRunInfo& info, std::size_t blocks) {
  return info.model.name + " \u00B7 " + counted(static_cast<long long>(info.tokens.size()), "token") + " \u00B7 " +
         counted(static_cast<long long>(blocks), "attention block");
}

int run(const Options& options, std::ostream& out, std::ostream& err) { return run(options, out, err, std::cin); }

int run(const Options& given, std::ostream& out, std::ostream& err, std::istream& in) {
  if (given.threads > 0) Eigen::setNbThreads(given.threads);
  PhaseTimer timer(given.profile);
  std::vector<std::string> warnings;
  int code = kExitOk;
  std::string error;
  try {
    const Options text_read = with_text_read(given, in);
    if (!text_read.model.empty()) check_model_path(text_read.model);
    const Options options = with_chat_prompt(text_read);
    check_text(options);
    dispatch(options, timer, out, to_standard_output(options) && options.command == Command::Dump ? err : out, err, warnings);
    out.flush();
    if (!out) throw OutputError::cannot_write("standard output", "the results could not be printed");
  } catch (const LimitError& e) {
    error = e.what();
    code = kExitLimitError;
  } catch (const OutputError& e) {
    error = e.what();
    code = kExitOutputError;
  } catch (const Error& e) {  // InputError, UsageError
    error = e.what();
    code = kExitInputError;
  } catch (const std::bad_alloc&) {
    error = "out of memory (lower the input size or --max-memory)";
    code = kExitLimitError;
  } catch (const std::exception& e) {
    error = std::string("internal error: ") + e.what() + " (please report this)";
    code = kExitInternalError;
  }
  print_warnings(warnings, err);
  if (!error.empty()) err << "attnviz: error: " << printable(error) << "\n";
  timer.print(err);
  return code;
}

}  // namespace attnviz
