#include "model/tokenizers/hf_end_tokens.hpp"

#include <algorithm>
#include <filesystem>
#include <limits>
#include <optional>
#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "io/json_file.hpp"
#include "io/json_reader.hpp"

namespace attnviz {

namespace {

namespace fs = std::filesystem;

// The eos_token_id of `path` (a token id or a list of them), or nullopt when it is absent or null.
std::optional<std::vector<std::int32_t>> eos_ids(const std::string& path) {
  const nlohmann::json root = read_json_file(path);
  require_object(JsonSource{root, path});
  const auto found = root.find("eos_token_id");
  if (found == root.end() || found->is_null()) return std::nullopt;
  constexpr long long kMaxId = std::numeric_limits<std::int32_t>::max();
  std::vector<std::int32_t> ids;
  if (!found->is_array()) {
    ids.push_back(static_cast<std::int32_t>(read_integer(*found, path, "/eos_token_id", 0, kMaxId)));
    return ids;
  }
  for (std::size_t i = 0; i < found->size(); ++i)
    ids.push_back(static_cast<std::int32_t>(read_integer((*found)[i], path, "/eos_token_id/" + std::to_string(i), 0, kMaxId)));
  return ids;
}

}  // namespace

std::vector<std::int32_t> hf_end_tokens(const std::string& folder) {
  const fs::path generation = fs::path(folder) / "generation_config.json";
  std::error_code ec;
  std::optional<std::vector<std::int32_t>> ids;
  if (fs::exists(generation, ec)) ids = eos_ids(generation.string());
  if (!ids) ids = eos_ids((fs::path(folder) / "config.json").string());
  std::vector<std::int32_t> sorted = ids.value_or(std::vector<std::int32_t>{});
  std::sort(sorted.begin(), sorted.end());
  sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
  return sorted;
}

}  // namespace attnviz
