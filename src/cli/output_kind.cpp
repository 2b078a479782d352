#include "cli/output_kind.hpp"

#include <algorithm>
#include <cctype>
#include <filesystem>

#include "core/error.hpp"

namespace attnviz {

namespace {

namespace fs = std::filesystem;

// The extensions of the files attnviz writes: a folder named so is most likely a file meant.
constexpr const char* kFileExtensions[] = {".png", ".svg", ".html", ".json", ".csv", ".jsonl", ".safetensors"};

std::string lower_extension(const std::string& path) {
  std::string extension = fs::path(path).extension().string();
  for (char& c : extension) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return extension;
}

const char* command_name(Command command) {
  switch (command) {
    case Command::Dump: return "dump";
    case Command::Heatmaps: return "heatmaps";
    case Command::Render: return "render";
    case Command::Compare: return "compare";
    case Command::Explain: return "explain";
    case Command::Tokenize: return "tokenize";
    case Command::Attribute: return "attribute";
    case Command::Census: return "census";
    case Command::Serve: return "serve";
  }
  return "";
}

// What the command writes, for the messages.
std::string what_it_writes(Command command) {
  switch (command) {
    case Command::Dump: return "JSON or safetensors";
    case Command::Compare: return "a PNG picture";
    case Command::Heatmaps:
    case Command::Render: return "a folder (grid.png and head_<h>.png)";
    case Command::Explain: return "a folder (explain.json, explain.png, circuits.png)";
    case Command::Attribute: return "a folder (attribution.json and attribution.png)";
    case Command::Census: return "a folder (census.json, census.csv, census.png and the journal texts.jsonl)";
    case Command::Tokenize: return "to standard output";
    case Command::Serve: return "nothing (it answers over HTTP)";
  }
  return "";
}

}  // namespace

std::string output_kind(Command command) {
  switch (command) {
    case Command::Dump:
    case Command::Compare: return "file";
    case Command::Tokenize:
    case Command::Serve: return "";
    case Command::Heatmaps:
    case Command::Render:
    case Command::Explain:
    case Command::Attribute:
    case Command::Census: return "folder";
  }
  return "";
}

void check_output_kind(const Options& options) {
  const std::string& output = options.output;
  const std::string kind = output_kind(options.command);
  if (output.empty() || kind.empty()) return;
  const std::string name = command_name(options.command);
  const std::string writes = name + " writes " + what_it_writes(options.command);
  const std::string quoted = "\"" + output + "\"";
  std::error_code ec;
  const bool is_folder = fs::is_directory(output, ec);
  const std::string extension = lower_extension(output);
  if (options.command == Command::Dump && options.dump_format == "json" && extension == ".safetensors")
    throw UsageError::bad_option("--format", "json, but -o " + quoted + " names a .safetensors file; drop --format json, or name the file .json");
  if (output == "-") {
    if (options.command == Command::Dump && options.dump_format == "safetensors")
      throw UsageError::bad_option("-o", "\"-\" (standard output) takes JSON only; a safetensors dump is written to a file (e.g. -o dump.safetensors)");
    if (options.command == Command::Dump) return;
    throw UsageError::bad_option("-o", "\"-\" (standard output) is for dump's JSON; " + writes +
                                           (kind == "folder" ? ": give a folder name" : " (.svg and .html beside it): give a file name ending in .png"));
  }
  if (kind == "folder") {
    if (is_folder) return;
    const bool file_like = std::find(std::begin(kFileExtensions), std::end(kFileExtensions), extension) != std::end(kFileExtensions);
    if (file_like)
      throw UsageError::bad_option("-o", quoted + " names a " + extension + " file, but " + writes + "; give a folder name, e.g. -o " +
                                             fs::path(output).replace_extension().string());
    return;  // an existing file is refused as a place for a folder (require_creatable_folder)
  }
  // An existing folder is left to the writer, which refuses it as the place of a file (exit 2).
  if (is_folder) return;
  if (output.back() == '/')
    throw UsageError::bad_option("-o", quoted + " names a folder, but " + writes + "; give a file name, e.g. -o " +
                                           (fs::path(output) / (options.command == Command::Dump ? "attention.json" : "compare.png")).string());
  if (options.command == Command::Compare && extension != ".png")
    throw UsageError::bad_option("-o", quoted + (extension.empty() ? " has no extension" : " names a " + extension + " file") + ", but " +
                                           writes + (extension == ".json" || extension == ".csv" ? " (the statistics go to --stats FILE.json or FILE.csv)" : "") +
                                           "; give a name ending in .png, e.g. -o " + fs::path(output).replace_extension(".png").string());
  if (options.command == Command::Dump && extension != ".json" && extension != ".safetensors" &&
      std::find(std::begin(kFileExtensions), std::end(kFileExtensions), extension) != std::end(kFileExtensions))
    throw UsageError::bad_option("-o", quoted + " names a " + extension + " file, but " + writes + "; give a name ending in .json or .safetensors");
}

}  // namespace attnviz
