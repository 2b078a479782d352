// What a Hugging Face config.json names beyond what a reader applies: the architecture taken
// when "architectures" lists several, and the members no reader looked at, named in one warning
// (as the GGUF readers name metadata keys they do not know). Does not read any setting itself.
#pragma once

#include <set>
#include <string>

namespace attnviz {

class JsonSettings;

/// The architecture a config.json names, and a warning when it names more than one.
struct HfArchitecture {
  std::string name;     ///< the first of "architectures", else "model_type", else "unknown"
  std::string warning;  ///< "FILE: /architectures lists A, B: attnviz reads A (the first), not B"; "" for one
};

/// The first entry of /architectures (transformers' pipelines and save_pretrained put the
/// model's own class first), else /model_type when /architectures is absent (a BERT folder, or a
/// model_type attnviz does not know). Throws InputError naming the file and member for an
/// /architectures that is absent beside a decoder's model_type, not a list of strings, or empty,
/// and for a /model_type that is not the one transformers gives the class (model_type "llama"
/// beside GPT2LMHeadModel, whose model_type is "gpt2").
HfArchitecture hf_architecture(const JsonSettings& config);

/// config.json members that carry no semantics for the forward pass in float32 inference:
/// bookkeeping (_name_or_path, torch_dtype, transformers_version, model_type, auto_map…), token
/// ids (read by the tokenizer and generation), dropouts and initialisation (training only),
/// cache and output switches.
const std::set<std::string>& hf_harmless_config_members();

/// "FILE: config.json members attnviz does not read for ARCHITECTURE, ignored: /a, /b/c" for the
/// members of `config` that no read looked at (JsonSettings::unread_members) and that are not
/// harmless; "" when every member was read. Call after the whole config has been read.
std::string unread_config_warning(const JsonSettings& config, const std::string& architecture);

}  // namespace attnviz
