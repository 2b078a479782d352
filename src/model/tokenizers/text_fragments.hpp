// The first step of llama.cpp's tokenizers on a GGUF's vocabulary (tokenizer_st_partition in
// llama-vocab.cpp): the text is cut around the special tokens written in it, which stand for
// themselves. With parse_special (llama_tokenize's flag, attnviz's default) the control, user-
// defined and unknown tokens are looked for ("<|im_start|>", "<s>", "<unk>"); without it only the
// user-defined ones, as llama.cpp does. A tokenizer.json's added tokens are split by
// added_vocabulary instead. Internal to model/.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "model/tokenizers/vocabulary.hpp"

namespace attnviz {

/// A run of plain text to tokenize, or one special token.
struct TextFragment {
  std::string_view text;              ///< the run, or the token's text
  std::optional<std::int32_t> token;  ///< set for a special token
};

/// `text` in order as fragments; none for empty text. As llama.cpp: longer pieces are looked for
/// first (equal lengths by id; llama.cpp's std::sort leaves their order unspecified), each
/// occurrence left to right in the runs still plain; a token in vocab.lstrip_tokens takes the
/// white space (C isspace) before it out of the text, one in vocab.rstrip_tokens the white space
/// after it. Empty pieces never match. The views point into `text`.
std::vector<TextFragment> split_at_special_tokens(const Vocabulary& vocab, std::string_view text, bool parse_special);

/// True for the token types tokenizer_st_partition looks for: control, user-defined and unknown
/// with parse_special, user-defined only without it.
bool is_partitioned_type(TokenType type, bool parse_special);

}  // namespace attnviz
