#include "model/tokenizers/added_vocabulary.hpp"

#include <algorithm>
#include <unordered_map>
#include <utf8proc.h>

#include "core/utf8.hpp"

namespace attnviz {

namespace {

// Rust regex's \s: the White_Space property.
bool is_space(char32_t c) {
  return (c >= 0x09 && c <= 0x0D) || c == 0x20 || c == 0x85 || c == 0xA0 || c == 0x1680 || (c >= 0x2000 && c <= 0x200A) ||
         c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F || c == 0x3000;
}

// Rust regex's \w: Alphabetic, marks, decimal digits, connector punctuation and Join_Control.
// Alphabetic is the letters, Nl and Other_Alphabetic; the Other_Alphabetic characters that are
// not marks are the circled and squared Latin letters.
bool is_word(char32_t c) {
  switch (utf8proc_category(static_cast<utf8proc_int32_t>(c))) {
    case UTF8PROC_CATEGORY_LU: case UTF8PROC_CATEGORY_LL: case UTF8PROC_CATEGORY_LT: case UTF8PROC_CATEGORY_LM:
    case UTF8PROC_CATEGORY_LO: case UTF8PROC_CATEGORY_NL: case UTF8PROC_CATEGORY_MN: case UTF8PROC_CATEGORY_MC:
    case UTF8PROC_CATEGORY_ME: case UTF8PROC_CATEGORY_ND: case UTF8PROC_CATEGORY_PC:
      return true;
    default:
      break;
  }
  return c == 0x200C || c == 0x200D || (c >= 0x24B6 && c <= 0x24E9) || (c >= 0x1F130 && c <= 0x1F149) ||
         (c >= 0x1F150 && c <= 0x1F169) || (c >= 0x1F170 && c <= 0x1F189);
}

// The patterns of some added tokens, each looked up by its first character.
class Patterns {
 public:
  explicit Patterns(const std::vector<HfAddedToken>& tokens) {
    for (std::size_t k = 0; k < tokens.size(); ++k) {
      patterns_.push_back(decode_utf8(tokens[k].pattern));
      if (!patterns_.back().empty()) by_first_[patterns_.back().front()].push_back(k);  // an empty one never matches
    }
  }
  /// The index of the longest pattern that starts at text[at], if any.
  std::optional<std::size_t> longest_at(const std::u32string& text, std::size_t at) const {
    const auto it = by_first_.find(text[at]);
    if (it == by_first_.end()) return std::nullopt;
    std::optional<std::size_t> best;
    for (const std::size_t k : it->second)
      if ((!best || patterns_[k].size() > patterns_[*best].size()) && text.compare(at, patterns_[k].size(), patterns_[k]) == 0) best = k;
    return best;
  }
  std::size_t size(std::size_t k) const { return patterns_[k].size(); }

 private:
  std::vector<std::u32string> patterns_;
  std::unordered_map<char32_t, std::vector<std::size_t>> by_first_;
};

}  // namespace

std::vector<AddedSection> split_at_added(const std::u32string& text, bool at_start, const std::vector<HfAddedToken>& tokens,
                                         bool parse_special) {
  if (text.empty()) return {};  // no section (the library's one empty section yields no word)
  if (tokens.empty()) return {{text, std::nullopt, at_start}};
  const Patterns patterns(tokens);
  std::vector<AddedSection> out;
  const auto plain = [&](std::size_t from, std::size_t to) { out.push_back({text.substr(from, to - from), std::nullopt, at_start && from == 0}); };
  std::size_t taken = 0;  // the end of the last token kept (start_offset)
  for (std::size_t at = 0; at < text.size();) {
    const std::optional<std::size_t> match = patterns.longest_at(text, at);
    if (!match) {
      ++at;
      continue;
    }
    const HfAddedToken* token = &tokens[*match];
    std::size_t start = at, stop = at + patterns.size(*match);
    at = stop;  // the next match is looked for after this one, kept or not
    if (!parse_special && token->special) continue;  // encode_special_tokens: its text stays plain
    if (token->single_word) {
      const bool word_before = start > 0 && is_word(text[start - 1]);
      const bool word_after = stop < text.size() && is_word(text[stop]);
      if (word_before || word_after) continue;
    }
    if (token->lstrip) {
      std::size_t first_space = start;
      while (first_space > 0 && is_space(text[first_space - 1])) --first_space;
      start = std::max(first_space, taken);
    }
    // rstrip's spaces may hold the start of the next match, which then overlaps this one, as
    // in the library (the Aho-Corasick iteration has moved on only past the pattern).
    if (token->rstrip)
      while (stop < text.size() && is_space(text[stop])) ++stop;
    if (taken < start) plain(taken, start);
    out.push_back({text.substr(start, stop - start), token->id, at_start && start == 0});
    taken = stop;
  }
  if (taken < text.size()) plain(taken, text.size());
  return out;
}

std::vector<AddedSection> extract_added(const HfPipeline& hf, std::string_view text,
                                        const std::function<NormalizedText(const std::u32string&)>& normalize, bool parse_special) {
  std::vector<AddedSection> out;
  for (const AddedSection& raw : split_at_added(decode_utf8(text), true, hf.raw_added, parse_special)) {
    if (raw.token) {
      out.push_back(raw);
      continue;
    }
    const NormalizedText normalized = normalize(raw.text);
    for (AddedSection& section : split_at_added(normalized.text, raw.at_start && normalized.keeps_start, hf.normalized_added, parse_special))
      out.push_back(std::move(section));
  }
  return out;
}

}  // namespace attnviz
