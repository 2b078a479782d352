// The steps of a Hugging Face tokenizer.json that attnviz runs itself for the kinds llama.cpp's
// tokenizers do not match exactly: the SentencePiece-style BPE of Llama 2, Mistral, TinyLlama
// and Gemma (Vocabulary model "hf-bpe") and BERT's WordPiece ("hf-wordpiece"). Read by
// hf_tokenizer, run by tokenizer_hf (a byte-level BPE tokenizer.json keeps its normalizer and
// added tokens here too, for tokenizer_bpe), following the tokenizers library (huggingface/tokenizers,
// tokenizers/src: normalizers/, pre_tokenizers/, models/bpe/word.rs, models/wordpiece/mod.rs).
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace attnviz {

/// One normalizer step, applied in file order to each run of text between added tokens.
struct HfNormalizerStep {
  enum class Kind { Prepend, Replace, Nfc, Nfd, Nfkc, Nfkd, Lowercase, Bert };
  Kind kind = Kind::Prepend;
  std::string pattern;  ///< Replace: the string replaced (a String pattern, not a Regex)
  std::string content;  ///< Prepend: the prefix; Replace: what replaces `pattern`
  // Bert: BertNormalizer's options (strip_accents null follows lowercase, as the library does).
  bool clean_text = true, handle_chinese_chars = true, strip_accents = true, lowercase = true;
};

/// One pre-tokenizer step: splits each word into words.
struct HfPreTokenizerStep {
  enum class Kind { Metaspace, Bert };
  Kind kind = Kind::Metaspace;
  std::string replacement = "\xE2\x96\x81";  ///< Metaspace: what a space becomes ("▁")
  enum class Prepend { Always, First, Never } prepend = Prepend::Always;  ///< Metaspace's prepend_scheme
  bool split = true;                          ///< Metaspace: a word starts at every replacement
};

/// An added token as the library matches it (AddedToken, tokenizers/src/tokenizer/added_vocabulary.rs).
struct HfAddedToken {
  std::string pattern;  ///< what is looked for: the content, normalized for a token with "normalized": true
  std::int32_t id = 0;
  bool single_word = false;  ///< kept only with no word character (regex \w) next to it
  bool lstrip = false;       ///< takes the white space before it
  bool rstrip = false;       ///< takes the white space after it
  bool special = false;      ///< "special": true; read as text without parse_special (encode_special_tokens)
};

/// What hf-bpe and hf-wordpiece tokenize by, besides the Vocabulary's pieces.
struct HfPipeline {
  std::vector<HfNormalizerStep> normalizer;
  std::vector<HfPreTokenizerStep> pre_tokenizer;
  // BPE: merges by rank, (id of a) << 32 | (id of b) -> (rank, id of "ab"); byte_fallback spells a
  // character missing from the vocabulary as <0xNN> tokens; fuse_unk makes consecutive unknown
  // characters one unknown token.
  std::unordered_map<std::uint64_t, std::pair<std::int32_t, std::int32_t>> merges;
  bool byte_fallback = false;
  bool fuse_unk = false;
  bool ignore_merges = false;
  // WordPiece: the prefix of pieces that continue a word, and the longest word looked up.
  std::string continuing_subword_prefix = "##";
  std::size_t max_input_chars_per_word = 100;
  std::int32_t unk = -1;  ///< the unknown token's id; -1: none (a character without a piece is dropped, as the library does)
  /// Added tokens matched in the raw text (normalized false) and in each section's normalized
  /// text (normalized true, their content normalized too), before anything else (added_vocabulary).
  std::vector<HfAddedToken> raw_added, normalized_added;
  /// The post-processor's template for one text: ids before and after it.
  std::vector<std::int32_t> prefix, suffix;
};

}  // namespace attnviz
