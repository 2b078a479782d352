// The end tokens of a Hugging Face folder: the ids greedy decoding stops at.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace attnviz {

/// The ids greedy decoding stops at for the Hugging Face folder `folder`, as transformers'
/// generate() takes them: generation_config.json's eos_token_id when that file exists and gives
/// one (not null), else config.json's. Each is a token id or a list of them (Llama 3's
/// [128001, 128008, 128009]); null or absent gives none. Returned sorted, each once.
/// Throws InputError naming the file and the JSON pointer ("/eos_token_id/1") for a value that is
/// not an integer from 0 to 2^31 − 1 nor a list of them, and as read_json_file for a file that
/// cannot be read or is not JSON.
std::vector<std::int32_t> hf_end_tokens(const std::string& folder);

}  // namespace attnviz
