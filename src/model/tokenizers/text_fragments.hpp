// The first step of llama.cpp's tokenizers on a GGUF's vocabulary: the text is cut around the
// user-defined tokens, which stand for themselves wherever they occur (llama.cpp's
// tokenizer_st_partition with parse_special off). Control tokens such as "<s>" are not
// recognised in text. A tokenizer.json's added tokens are split by added_vocabulary instead.
// Internal to model/.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "model/tokenizers/vocabulary.hpp"

namespace attnviz {

/// A run of plain text to tokenize, or one user-defined token.
struct TextFragment {
  std::string_view text;              ///< the run, or the token's text
  std::optional<std::int32_t> token;  ///< set for a user-defined token
};

/// `text` in order as fragments; none for empty text. Longer user-defined pieces are found
/// first, each occurrence left to right. The views point into `text`.
std::vector<TextFragment> split_at_user_defined_tokens(const Vocabulary& vocab, std::string_view text);

}  // namespace attnviz
