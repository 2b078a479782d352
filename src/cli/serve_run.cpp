#include "cli/serve_run.hpp"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>

#include "cli/attention_job.hpp"
#include "cli/heatmap_job.hpp"
#include "cli/run.hpp"
#include "core/error.hpp"
#include "records/model_dump.hpp"
#include "records/record_json.hpp"
#include "records/safetensors_dump.hpp"
#include "render/html_report.hpp"
#include "render/model_pictures.hpp"
#include "render/picture_formats.hpp"

namespace attnviz {

ServedRun serve_run(const DecoderSession& session, const Options& request, bool with_report) {
  ServedRun served;
  ModelDumpWriter writer;
  ReportPage page;
  ModelPictures pictures(request, false, "", memory_budget_bytes(request));
  std::size_t blocks = 0;
  const BlockSink sink = [&](AttentionBlock&& block) {
    if (with_report) {
      for (ReportView& view : heatmap_report_views(block.record, request, view_name(block_folder(block, false)),
                                                   memory_budget_bytes(request), block.block_name()))
        page.views.push_back(std::move(view));
      pictures.add(block);
    } else {
      writer.add(block);
    }
    ++blocks;
  };
  // The dump's text, or the page's float32 weights, are held until the answer is made.
  const KeptBytes kept = [with_report](long tokens, int layers, int heads) {
    const double values = static_cast<double>(tokens) * static_cast<double>(tokens) * layers * heads;
    return values * (with_report ? 2 * sizeof(float) : kMaxDumpBytesPerNumber);
  };
  const ModelRunInfo info = session.run(request, sink, served.warnings, memory_budget_bytes(request), kept);
  if (with_report) {
    for (ReportView& view : pictures.report_views(info)) page.views.push_back(std::move(view));
    page.title = model_report_title(info, blocks);
    page.layered = true;
    if (info.prompt_length < static_cast<int>(info.tokens.size())) page.prompt_length = info.prompt_length;
    served.report_html = html_report(page);
  }
  if (!with_report)
    for (std::string& piece : writer.finish(info, false)) served.dump_json += piece;
  served.tokens = static_cast<long>(info.tokens.size());
  return served;
}

std::string serve_safetensors(const DecoderSession& session, const Options& request, std::vector<std::string>& warnings) {
  std::string folder = (std::filesystem::temp_directory_path() / "attnviz-serve-XXXXXX").string();
  if (!mkdtemp(folder.data())) throw OutputError::cannot_write(folder, std::strerror(errno));
  // Removed however the run ends.
  const std::unique_ptr<std::string, void (*)(std::string*)> remove(&folder, [](std::string* path) {
    std::error_code ignored;
    std::filesystem::remove_all(*path, ignored);
  });
  const std::string path = folder + "/run.safetensors";
  std::ofstream(path, std::ios::binary).close();  // the writer opens an existing file, as OutputSet::stream_ahead makes one
  {
    SafetensorsDumpWriter writer(path, path, false);
    const BlockSink sink = [&](AttentionBlock&& block) { writer.add(block); };
    const KeptBytes kept = [&](long tokens, int layers, int) {
      writer.plan(tokens, layers);
      return 0.0;
    };
    const ModelRunInfo info = session.run(request, sink, warnings, memory_budget_bytes(request), kept);
    writer.finish(info, false);
  }
  std::ifstream in(path, std::ios::binary);
  std::ostringstream read;
  read << in.rdbuf();
  if (!in) throw OutputError::cannot_write(path, "the run's safetensors could not be read back");
  return read.str();
}

}  // namespace attnviz
