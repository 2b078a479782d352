// Hugging Face's tokenizers library's pipeline for the tokenizer.json kinds that llama.cpp's
// tokenizers do not match exactly (model "hf-bpe": SentencePiece-style BPE; "hf-wordpiece":
// BERT's WordPiece): added tokens split first, the normalizer applied between them
// (added_vocabulary), then per section of text the pre-tokenizer and the model, then the
// post-processor's template. Internal to model/; callers use tokenize().
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "model/tokenizers/added_vocabulary.hpp"
#include "model/tokenizers/vocabulary.hpp"

namespace attnviz {

/// tokenize() for models "hf-bpe" and "hf-wordpiece" (vocab.hf holds the steps). With
/// add_special, vocab.hf.prefix and suffix frame the ids. Throws InputError naming the file when
/// a WordPiece word needs the unknown token and the vocabulary has none (the library fails too).
std::vector<std::int32_t> tokenize_hf(const Vocabulary& vocab, std::string_view text, bool add_special, bool parse_special);

/// The text after the normalizer steps, and whether its first character is the input's first
/// (what Metaspace's prepend_scheme "first" looks at). Also what a normalized added token's
/// content becomes (hf_tokenizer_kinds).
NormalizedText hf_normalize(const std::vector<HfNormalizerStep>& steps, std::u32string text);

}  // namespace attnviz
