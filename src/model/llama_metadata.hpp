// The `llama.`-prefixed metadata of a GGUF file that attnviz does not read as a setting:
// keys that would change the maths are refused, keys it does not know are named in a warning.
#pragma once

#include <string>
#include <vector>

namespace attnviz {

class GgufFile;

/// Checks the `llama.` keys of `file` that decoder_config_from_gguf does not apply. Throws
/// InputError ("FILE: metadata KEY = VALUE: …, which attnviz does not apply") for a key that
/// changes the model's maths in llama.cpp (a sliding window, logit soft-capping, extra scales,
/// experts, a non-causal mask, …) unless it holds that key's neutral value (0 window, scale 1,
/// causal true), or an attention.value_length other than the key heads' width `d_k`. Returns at most one warning, naming every `llama.` key attnviz neither reads
/// nor knows to be harmless (one line, "FILE: …"); empty when there is none.
std::vector<std::string> check_llama_metadata(const GgufFile& file, long d_k);

}  // namespace attnviz
