// The tokenizers library's first step on a tokenizer.json's text (AddedVocabulary::
// extract_and_normalize, tokenizers/src/tokenizer/added_vocabulary.rs): the added tokens that
// are not normalized are split out of the raw text, then each remaining section is normalized
// and the normalized added tokens are split out of it. Does not read tokenizer.json
// (hf_tokenizer_parts does) and does not know the normalizers (the caller passes them).
// Internal to model/.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/tokenizers/hf_pipeline.hpp"

namespace attnviz {

/// A section of a text after the added tokens are split out: one added token, or text the
/// pre-tokenizer and the model still have to split.
struct AddedSection {
  std::u32string text;                ///< the section (for a token: what it covered, spaces it stripped included)
  std::optional<std::int32_t> token;  ///< the added token's id
  /// The section's first character is the text's first (NormalizedString::offsets_original
  /// starting at 0): what Metaspace's prepend_scheme "first" asks.
  bool at_start = false;
};

/// A normalizer's output: the text, and whether its first character comes from the input's
/// first one (false when the normalizer deleted that character, as BertNormalizer's clean_text
/// deletes a control character).
struct NormalizedText {
  std::u32string text;
  bool keeps_start = true;
};

/// AddedVocabulary::find_matches: `text` cut at `tokens`' patterns, leftmost-longest without
/// overlap (the Aho-Corasick iteration: a match single_word discards still uses up its text);
/// lstrip takes the white space before a match (not into the previous token), rstrip the white
/// space after it; single_word keeps a match only between non-word characters (regex \w).
/// `at_start`: the text is the input's beginning. Without `parse_special`, a match of a special
/// token is passed over (its text stays plain), as the library's encode_special_tokens does.
std::vector<AddedSection> split_at_added(const std::u32string& text, bool at_start, const std::vector<HfAddedToken>& tokens,
                                         bool parse_special = true);

/// extract_and_normalize of `text` (UTF-8; bytes that are not become U+FFFD): hf.raw_added split
/// out of the raw text, then `normalize` applied to each other section, then hf.normalized_added
/// split out of the normalized sections. Sections of text come back normalized. Without
/// `parse_special`, special added tokens are read as text (split_at_added).
std::vector<AddedSection> extract_added(const HfPipeline& hf, std::string_view text,
                                        const std::function<NormalizedText(const std::u32string&)>& normalize, bool parse_special);

}  // namespace attnviz
