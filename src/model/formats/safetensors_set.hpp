// The safetensors files of a Hugging Face folder read as one set of tensors: model.safetensors,
// or the shards model.safetensors.index.json names (checked against its weight_map), with the
// aliases their __metadata__ records. safetensors.torch.save_model stores one name of tensors
// that share storage (the first in sorted order) and records each other name as a metadata key
// whose value is the name kept: a tied Llama keeps lm_head.weight and writes
// {"model.embed_tokens.weight": "lm_head.weight"} (safetensors' torch.py, _remove_duplicate_names).
// Not here: which names a model reads, or the tying its config.json asks for (hf_decoder).
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "model/formats/safetensors_file.hpp"

namespace attnviz {

/// A tensor looked up by name: the file and entry holding its bytes and, when the name is an
/// alias, the names followed to reach it (the name asked for first; tensor->name not included).
struct FoundTensor {
  const SafetensorsFile* file = nullptr;
  const SafetensorsTensor* tensor = nullptr;
  std::vector<std::string> aliases;  ///< empty: stored under the name asked for
  explicit operator bool() const { return tensor != nullptr; }
};

class SafetensorsSet {
 public:
  /// Maps `folder`'s model.safetensors, else the shards its model.safetensors.index.json names.
  /// Throws InputError as SafetensorsFile for a broken file, and naming the index and the tensor
  /// for a weight_map that disagrees with its shards (a tensor in two shards, or in another shard
  /// than the map says, or in none: a name the map lists must be stored in its shard, or be an
  /// alias that shard's __metadata__ records).
  explicit SafetensorsSet(const std::string& folder);

  /// The tensor stored under `name`; else, when `name` is a key of a file's __metadata__, the
  /// tensor that key is an alias of (followed through further aliases); else none. Only names a
  /// model asks for are looked up, so free-text keys ("format": "pt") are never taken for
  /// aliases. Throws InputError naming both names for an alias whose target is neither stored nor
  /// an alias, for aliases that lead back to a name already followed (a cycle), and for two
  /// shards that make one name an alias of different tensors.
  FoundTensor find(std::string_view name) const;

  const std::vector<std::unique_ptr<SafetensorsFile>>& files() const { return files_; }
  /// model.safetensors, or the index of a sharded folder: the file a message names for a tensor
  /// that no file holds.
  const std::string& path() const { return path_; }

 private:
  const SafetensorsTensor* stored(std::string_view name, const SafetensorsFile** file) const;

  std::string path_;
  std::vector<std::unique_ptr<SafetensorsFile>> files_;
};

}  // namespace attnviz
