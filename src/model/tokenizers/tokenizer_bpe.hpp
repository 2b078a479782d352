// Byte-level BPE (tokenizer.ggml.model "gpt2"), as llama.cpp's llm_tokenizer_bpe: the text is
// split into words by the pre-tokenizer tokenizer.ggml.pre names, each word's bytes are spelt
// with GPT-2's byte-to-unicode alphabet, and adjacent symbols merge in the order of
// tokenizer.ggml.merges (lowest rank first). Internal to model/; callers use tokenize().
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "model/tokenizers/vocabulary.hpp"

namespace attnviz {

/// tokenize() for model "gpt2". Bytes that are not valid UTF-8 are read as U+FFFD, as
/// llama.cpp does. Throws InputError naming tokenizer.ggml.pre when it is not supported.
std::vector<std::int32_t> tokenize_bpe(const Vocabulary& vocab, std::string_view text, bool add_special, bool parse_special);

/// GPT-2's spelling of one byte (bytes_to_unicode): "a" for 'a', "Ġ" (U+0120) for ' '.
const std::string& gpt2_byte_piece(unsigned char byte);

/// The bytes a byte-level piece spells: GPT-2's byte-to-unicode mapping undone ("Ġhi" -> " hi").
/// Characters outside that alphabet are kept as they are.
std::string gpt2_piece_bytes(std::string_view piece);

}  // namespace attnviz
