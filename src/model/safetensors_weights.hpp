// A Hugging Face folder's safetensors tensors served to a model under llama.cpp's tensor names:
// renamed to the folder's names, Conv1D matrices transposed, Gemma's norms read as 1 + w, and
// the input embedding and the output projection taken from each other when config.json ties
// them (tie_word_embeddings) and only one is stored, in either direction, as transformers'
// tie_weights does in from_pretrained ("tying is symmetric": a missing source is tied to the
// target that exists). Aliases that a file's __metadata__ records are followed by SafetensorsSet.
// Not here: reading config.json (hf_decoder, hf_encoder).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "model/decoder_model.hpp"

namespace attnviz {

/// The two names of a model's tied matrix in a folder: the input embedding
/// ("model.embed_tokens.weight") and the output projection ("lm_head.weight"), [n_vocab, d_model]
/// both. When `tied` (config.json's tie_word_embeddings), either stands in for the other when
/// absent; both stored must have one shape.
struct TiedNames {
  std::string embedding;
  std::string output;
  bool tied = false;
};

/// How a model's tensor names become a folder's.
struct SafetensorsNaming {
  std::function<std::string(const std::string&)> rename;  ///< llama.cpp's name -> the folder's
  /// A prefix the folder's names may carry or not ("transformer." for GPT-2: GPT2LMHeadModel
  /// saves it, GPT2Model does not).
  std::string optional_prefix;
  /// llama.cpp's names after "blk.L." of matrices stored as Conv1D's [in, out] (GPT-2),
  /// transposed when read, as convert_hf_to_gguf.py does.
  std::vector<std::string> transposed;
  /// Norm weights ("…norm.weight") stored as w where the norm multiplies by 1 + w (Gemma);
  /// served as 1 + w, as llama.cpp's converter writes them.
  bool norm_plus_one = false;
  TiedNames tie;  ///< names in the folder's spelling (after rename, without optional_prefix)
};

/// The tensors of `folder` (model.safetensors, or the shards of model.safetensors.index.json)
/// as a WeightSource. Throws InputError as SafetensorsSet, and naming both tensors when a tie
/// joins two stored tensors of different shapes. Its reads throw InputError naming the file and
/// the tensor (and the alias or tie followed to it) for a missing tensor or another shape.
std::unique_ptr<WeightSource> safetensors_weights(const std::string& folder, SafetensorsNaming naming);

}  // namespace attnviz
