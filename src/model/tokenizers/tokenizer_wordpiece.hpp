// WordPiece (tokenizer.ggml.model "bert"), as llama.cpp's llm_tokenizer_wpm: BERT's basic
// normalisation (lower-casing, accents stripped, control characters dropped, punctuation and
// CJK ideographs split off as words), then the longest vocabulary pieces, left to right, for
// each word. Unicode properties come from ICU. Internal to model/; callers use tokenize().
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "model/tokenizers/vocabulary.hpp"

namespace attnviz {

/// tokenize() for model "bert". With add_special, the BOS id (BERT's [CLS]; cls when there is
/// no BOS) comes first and SEP last. A word with no complete cover by pieces is one unknown
/// token; throws InputError if that is needed and the vocabulary has no unknown token.
std::vector<std::int32_t> tokenize_wordpiece(const Vocabulary& vocab, std::string_view text, bool add_special, bool parse_special);

/// The words BERT's normaliser makes of `text` (exposed for tests): whitespace separates,
/// each punctuation mark, ASCII symbol and CJK ideograph is a word of its own.
std::vector<std::string> wordpiece_words(std::string_view text, bool lowercase, bool strip_accents);

}  // namespace attnviz
