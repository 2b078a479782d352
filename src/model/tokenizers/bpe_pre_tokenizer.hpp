// The pre-tokenizers of byte-level BPE: how tokenizer.ggml.pre splits text into words before
// merges, as llama.cpp's llm_tokenizer_bpe does (its regex list per pre type), matched with
// PCRE2 in UTF + UCP mode (\p{L}, \s… by Unicode properties). Internal to model/; does not
// byte-encode or merge (tokenizer_bpe does).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace attnviz {

/// One pre-tokenizer: regexes applied in order, each splitting every piece the previous ones
/// made into its matches and the text between them (llama.cpp's unicode_regex_split).
struct BpePreTokenizer {
  std::vector<std::string> patterns;
  /// A word that is already a vocabulary piece is kept whole, without merges (llama.cpp's
  /// ignore_merges, set for the llama3 family).
  bool ignore_merges = false;
  /// BOS is added when the file does not say (tokenizer.ggml.add_bos_token absent).
  bool add_bos = false;
};

/// The pre-tokenizer named by tokenizer.ggml.pre, or nullptr when this build has none.
const BpePreTokenizer* find_bpe_pre_tokenizer(std::string_view pre);

/// The words of `text`, byte for byte covering it. Requires valid UTF-8 (see tokenizer_bpe).
/// Throws InputError if PCRE2 fails on a pattern (named in the message).
std::vector<std::string> split_words(std::string_view text, const BpePreTokenizer& pre_tokenizer);

}  // namespace attnviz
