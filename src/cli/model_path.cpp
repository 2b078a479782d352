#include "cli/model_path.hpp"

#include <algorithm>
#include <filesystem>
#include <vector>

#include "core/error.hpp"
#include "model/hf_decoder.hpp"

namespace attnviz {

namespace {

namespace fs = std::filesystem;

bool is_hf_folder_file(const std::string& name) {
  static const char* const kNames[] = {"config.json", "tokenizer.json", "tokenizer_config.json", "generation_config.json",
                                       "model.safetensors.index.json", "special_tokens_map.json"};
  if (std::find(std::begin(kNames), std::end(kNames), name) != std::end(kNames)) return true;
  return name.ends_with(".safetensors");
}

bool is_ct2_folder_file(const std::string& name) {
  return name == "model.bin" || (name.find("vocabulary") != std::string::npos && (name.ends_with(".txt") || name.ends_with(".json")));
}

std::vector<std::string> gguf_files(const fs::path& folder) {
  std::vector<std::string> names;
  std::error_code ec;
  for (fs::directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec)) {
    const fs::path& path = it->path();
    std::error_code type_ec;
    if (path.extension() == ".gguf" && fs::is_regular_file(path, type_ec)) names.push_back(path.filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace

void check_model_path(const std::string& model) {
  std::error_code ec;
  const fs::path path(model);
  if (fs::is_regular_file(path, ec)) {
    const std::string name = path.filename().string();
    const fs::path folder = path.parent_path().empty() ? fs::path(".") : path.parent_path();
    if (is_hf_folder_file(name))
      throw UsageError::bad_option("--model", model + " is one file of a Hugging Face model folder; give the folder: --model " +
                                                  folder.string() + " (attnviz reads its config.json, model.safetensors and tokenizer.json together)");
    if (is_ct2_folder_file(name))
      throw UsageError::bad_option("--model", model + " is one file of a CTranslate2 model folder; give the folder: --model " +
                                                  folder.string());
    return;
  }
  if (!fs::is_directory(path, ec) || is_hf_model_folder(model) || fs::exists(path / "model.bin", ec)) return;
  const std::vector<std::string> ggufs = gguf_files(path);
  if (ggufs.empty()) return;
  const fs::path first = path / ggufs.front();
  if (ggufs.size() == 1)
    throw UsageError::bad_option("--model", model + " is a folder holding one GGUF file; a GGUF model is given as the file: --model " +
                                                first.string());
  std::string listed;
  for (std::size_t i = 0; i < ggufs.size() && i < 8; ++i) listed += (i ? ", " : "") + ggufs[i];
  if (ggufs.size() > 8) listed += ", … (" + std::to_string(ggufs.size()) + " in all)";
  throw UsageError::bad_option("--model", model + " is a folder of GGUF files (" + listed +
                                              "); a GGUF model is given as the file: --model " + first.string());
}

}  // namespace attnviz
