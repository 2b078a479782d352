// The `llama.`-prefixed metadata of a GGUF file that attnviz does not read as a setting:
// keys that would change the maths are refused, keys it does not know are named in a warning.
#pragma once

#include <string>
#include <vector>

namespace attnviz {

class GgufFile;

/// Checks the `llama.` keys of `file` that decoder_config_from_gguf does not apply. Throws
/// InputError ("FILE: metadata KEY = VALUE: …, which attnviz does not apply") for a key that
/// would change the model's maths (logit soft-capping, extra scales, experts, a non-causal mask,
/// …) unless it holds that key's neutral value (scale 1, causal true), or an
/// attention.value_length other than the key heads' width `d_k`. Returns warnings, "FILE: …": one
/// per non-zero sliding-window key (llama.cpp's llama graph applies none, nor does attnviz), and
/// one naming every `llama.` key attnviz neither reads nor knows to be harmless.
std::vector<std::string> check_llama_metadata(const GgufFile& file, long d_k);

}  // namespace attnviz
