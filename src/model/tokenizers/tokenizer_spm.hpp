// SentencePiece-style BPE by piece scores (tokenizer.ggml.model "llama"), as llama.cpp's
// llm_tokenizer_spm: characters merge pairwise, best-scoring pair first, into vocabulary
// pieces; what stays outside the vocabulary falls back to <0xXX> byte tokens. Internal to
// model/; callers use tokenize() in vocabulary.hpp.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "model/tokenizers/vocabulary.hpp"

namespace attnviz {

/// tokenize() for model "llama". Empty text gives no pieces (only BOS with add_special), as
/// SentencePiece's encode('') does.
std::vector<std::int32_t> tokenize_spm(const Vocabulary& vocab, std::string_view text, bool add_special, bool parse_special);

}  // namespace attnviz
