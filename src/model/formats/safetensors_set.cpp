#include "model/formats/safetensors_set.hpp"

#include <algorithm>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "io/json_file.hpp"
#include "io/json_reader.hpp"

namespace attnviz {

namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

std::string shard_name(const json& weight_map, const std::string& name) {
  return weight_map.contains(name) ? "/weight_map names " + weight_map[name].get<std::string>() : "/weight_map lists neither";
}

// transformers loads each tensor from the shard the weight_map names, so the map and the shards
// must agree exactly: a tensor mapped to a shard that lacks it, held by two shards, or held by a
// shard the map does not list it for means the folder is broken (a shard swapped for another
// checkpoint's, or a map from an older save), and which tensor wins would differ between
// loaders. A name the map lists that its shard records as an alias is that shard's.
void check_weight_map(const std::string& index_path, const json& weight_map,
                      const std::vector<std::unique_ptr<SafetensorsFile>>& files) {
  std::map<std::string, const SafetensorsFile*> holder;
  for (const auto& file : files)
    for (const auto& [name, tensor] : file->tensors()) {
      const auto [it, first] = holder.emplace(name, file.get());
      if (!first)
        throw InputError::inconsistent(index_path, "tensor " + name + " is in two shards, " + it->second->path() + " and " +
                                                       file->path() + " (" + shard_name(weight_map, name) + ")");
    }
  const auto file_named = [&](const std::string& shard) -> const SafetensorsFile* {
    for (const auto& file : files)
      if (fs::path(file->path()).filename().string() == shard) return file.get();
    return nullptr;
  };
  for (const auto& [name, shard] : weight_map.items()) {
    const auto it = holder.find(name);
    const std::string mapped = shard.get<std::string>();
    if (it == holder.end()) {
      if (file_named(mapped)->metadata().count(name)) continue;
      throw InputError::inconsistent(index_path, "/weight_map/" + name + " names shard " + mapped + ", but no shard the weight_map lists holds tensor " + name);
    }
    if (fs::path(it->second->path()).filename().string() != mapped)
      throw InputError::inconsistent(index_path, "/weight_map/" + name + " names shard " + mapped + ", but tensor " + name +
                                                     " is in " + it->second->path());
  }
  for (const auto& [name, file] : holder)
    if (!weight_map.contains(name))
      throw InputError::inconsistent(index_path, "tensor " + name + " of shard " + file->path() +
                                                     " is missing from /weight_map (transformers would not load it)");
}

std::string chain_text(const std::vector<std::string>& names, const std::string& last) {
  std::string text;
  for (const std::string& name : names) text += name + " -> ";
  return text + last;
}

}  // namespace

SafetensorsSet::SafetensorsSet(const std::string& folder) {
  const fs::path single = fs::path(folder) / "model.safetensors";
  if (fs::exists(single)) {
    path_ = single.string();
    files_.push_back(std::make_unique<SafetensorsFile>(path_));
    return;
  }
  path_ = (fs::path(folder) / "model.safetensors.index.json").string();
  const json index = read_json_file(path_);
  require_object(JsonSource{index, path_});
  if (!index.contains("weight_map") || !index["weight_map"].is_object())
    throw InputError::missing_field(path_, "/weight_map", "tensor name -> shard file");
  std::map<std::string, std::size_t> shard_of_file;
  for (const auto& [name, shard] : index["weight_map"].items()) {
    if (!shard.is_string()) throw InputError::bad_value(path_, "/weight_map/" + name, "a file name", shard.dump());
    const std::string file = shard.get<std::string>();
    if (file.find('/') != std::string::npos) throw InputError::bad_value(path_, "/weight_map/" + name, "a file in the folder", file);
    if (!shard_of_file.count(file)) {
      shard_of_file[file] = files_.size();
      files_.push_back(std::make_unique<SafetensorsFile>((fs::path(folder) / file).string()));
    }
  }
  check_weight_map(path_, index["weight_map"], files_);
}

const SafetensorsTensor* SafetensorsSet::stored(std::string_view name, const SafetensorsFile** file) const {
  for (const auto& f : files_)
    if (const SafetensorsTensor* tensor = f->find(name)) {
      *file = f.get();
      return tensor;
    }
  return nullptr;
}

FoundTensor SafetensorsSet::find(std::string_view name) const {
  FoundTensor found;
  std::string current(name);
  const SafetensorsFile* recorded_in = nullptr;  // the file whose __metadata__ led to `current`
  for (;;) {
    if ((found.tensor = stored(current, &found.file))) return found;
    const std::string* target = nullptr;
    const SafetensorsFile* target_file = nullptr;
    for (const auto& file : files_) {
      const auto it = file->metadata().find(current);
      if (it == file->metadata().end()) continue;
      if (target && *target != it->second) {
        const bool in_order = target_file->path() < file->path();  // named in the order of their paths, whatever the map's
        const auto& [a, a_file] = in_order ? std::pair(*target, target_file) : std::pair(it->second, file.get());
        const auto& [b, b_file] = in_order ? std::pair(it->second, file.get()) : std::pair(*target, target_file);
        throw InputError::inconsistent(path_, "tensor " + current + " is an alias of " + a + " in the __metadata__ of " + a_file->path() +
                                                  ", but of " + b + " in that of " + b_file->path());
      }
      target = &it->second;
      target_file = file.get();
    }
    if (!target) {
      if (found.aliases.empty()) return {};
      const std::string& key = found.aliases.back();
      throw InputError::inconsistent(recorded_in->path(), "__metadata__ makes tensor " + key + " an alias of " + current + ", but " +
                                                              (files_.size() == 1 ? "the file holds no tensor " : "no shard holds tensor ") + current +
                                                              (found.aliases.size() > 1 ? " (" + chain_text(found.aliases, current) + ")" : ""));
    }
    found.aliases.push_back(current);
    if (std::find(found.aliases.begin(), found.aliases.end(), *target) != found.aliases.end())
      throw InputError::inconsistent(target_file->path(), "__metadata__'s aliases go round in a cycle, " + chain_text(found.aliases, *target) +
                                                              ", and no tensor holds " + (found.aliases.size() == 1 ? "its" : "their") + " bytes");
    current = *target;
    recorded_in = target_file;
  }
}

}  // namespace attnviz
