#include "model/tokenizers/tokenizer_hf.hpp"

#include <algorithm>
#include <cstdio>
#include <memory>
#include <optional>
#include <queue>
#include <unordered_map>
#include <utf8proc.h>

#include "core/error.hpp"
#include "core/utf8.hpp"
#include "model/tokenizers/added_vocabulary.hpp"

namespace attnviz {

namespace {

using Ids = std::vector<std::int32_t>;

// --- Unicode, as the library's normalizers (Rust's char methods and unicode-normalization) see it.

utf8proc_category_t category_of(char32_t c) { return utf8proc_category(static_cast<utf8proc_int32_t>(c)); }

// unicode_categories' is_other: Cc, Cf, Cs, Co, Cn.
bool is_other(char32_t c) {
  const utf8proc_category_t k = category_of(c);
  return k == UTF8PROC_CATEGORY_CC || k == UTF8PROC_CATEGORY_CF || k == UTF8PROC_CATEGORY_CS || k == UTF8PROC_CATEGORY_CO ||
         k == UTF8PROC_CATEGORY_CN;
}

// Rust's char::is_whitespace: the White_Space property.
bool is_white_space(char32_t c) {
  const utf8proc_category_t k = category_of(c);
  return (c >= 0x09 && c <= 0x0D) || c == 0x85 || k == UTF8PROC_CATEGORY_ZS || k == UTF8PROC_CATEGORY_ZL ||
         k == UTF8PROC_CATEGORY_ZP;
}

// Unicode's P* categories (unicode_categories' is_punctuation).
bool is_punctuation(char32_t c) {
  const utf8proc_category_t k = category_of(c);
  return k == UTF8PROC_CATEGORY_PC || k == UTF8PROC_CATEGORY_PD || k == UTF8PROC_CATEGORY_PS || k == UTF8PROC_CATEGORY_PE ||
         k == UTF8PROC_CATEGORY_PI || k == UTF8PROC_CATEGORY_PF || k == UTF8PROC_CATEGORY_PO;
}

// BertPreTokenizer's is_bert_punc: Rust's is_ascii_punctuation (every printable ASCII
// character that is not a letter, digit or space) or a Unicode punctuation mark.
bool is_bert_punctuation(char32_t c) {
  const bool ascii = (c >= 0x21 && c <= 0x2F) || (c >= 0x3A && c <= 0x40) || (c >= 0x5B && c <= 0x60) || (c >= 0x7B && c <= 0x7E);
  return ascii || is_punctuation(c);
}

// BertNormalizer's is_chinese_char: the CJK Unified Ideographs blocks BERT treats as words.
bool is_chinese_char(char32_t c) {
  return (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x3400 && c <= 0x4DBF) || (c >= 0x20000 && c <= 0x2A6DF) ||
         (c >= 0x2A700 && c <= 0x2B73F) || (c >= 0x2B740 && c <= 0x2B81F) || (c >= 0x2B920 && c <= 0x2CEAF) ||
         (c >= 0xF900 && c <= 0xFAFF) || (c >= 0x2F800 && c <= 0x2FA1F);
}

// The text in a Unicode normalization form (utf8proc: NFC = COMPOSE, NFD = DECOMPOSE, K = COMPAT).
std::u32string normalization_form(const std::u32string& text, int options) {
  const std::string utf8 = encode_utf8(text);
  utf8proc_uint8_t* mapped = nullptr;
  const utf8proc_ssize_t length = utf8proc_map(reinterpret_cast<const utf8proc_uint8_t*>(utf8.data()),
                                               static_cast<utf8proc_ssize_t>(utf8.size()), &mapped,
                                               static_cast<utf8proc_option_t>(UTF8PROC_STABLE | options));
  if (length < 0) return text;  // only invalid UTF-8 fails, and encode_utf8 writes none
  const std::unique_ptr<utf8proc_uint8_t, decltype(&std::free)> owned(mapped, &std::free);
  return decode_utf8(std::string_view(reinterpret_cast<const char*>(mapped), static_cast<std::size_t>(length)));
}

// Rust's char::to_lowercase, one character at a time as NormalizedString::lowercase does: the
// simple mapping, except U+0130 (İ), whose full lowercase is two characters.
std::u32string lowercase(const std::u32string& text) {
  std::u32string out;
  for (const char32_t c : text) {
    if (c == 0x130) {
      out += U"i\u0307";
      continue;
    }
    out += static_cast<char32_t>(utf8proc_tolower(static_cast<utf8proc_int32_t>(c)));
  }
  return out;
}

// BertNormalizer::normalize (tokenizers/src/normalizers/bert.rs): clean_text, handle_chinese_chars,
// strip_accents (NFD, then nonspacing marks dropped), lowercase, in that order.
std::u32string bert_normalize(const HfNormalizerStep& step, std::u32string text, bool& keeps_start) {
  if (step.clean_text) {
    std::u32string clean;
    for (const char32_t c : text) {
      const bool white = c == '\t' || c == '\n' || c == '\r' || is_white_space(c);
      if (c == 0 || c == kReplacementCharacter || (!white && is_other(c))) {
        if (clean.empty()) keeps_start = false;
        continue;
      }
      clean += white ? U' ' : c;
    }
    text = std::move(clean);
  }
  if (step.handle_chinese_chars) {
    std::u32string spaced;
    for (const char32_t c : text) spaced += is_chinese_char(c) ? std::u32string{U' ', c, U' '} : std::u32string(1, c);
    text = std::move(spaced);
  }
  if (step.strip_accents) {
    std::u32string stripped;
    for (const char32_t c : normalization_form(text, UTF8PROC_DECOMPOSE)) {
      if (category_of(c) != UTF8PROC_CATEGORY_MN) stripped += c;
      else if (stripped.empty()) keeps_start = false;
    }
    text = std::move(stripped);
  }
  return step.lowercase ? lowercase(text) : text;
}

std::u32string replace_all(const std::u32string& text, const std::u32string& pattern, const std::u32string& content) {
  if (pattern.empty()) return text;
  std::u32string out;
  std::size_t from = 0;
  for (std::size_t at = text.find(pattern); at != std::u32string::npos; at = text.find(pattern, from)) {
    out.append(text, from, at - from).append(content);
    from = at + pattern.size();
  }
  return out.append(text, from, std::u32string::npos);
}

// --- Pre-tokenizers: each splits every word into words.

struct Word {
  std::u32string text;
  bool at_start;
};

// Metaspace (tokenizers/src/pre_tokenizers/metaspace.rs): spaces become the replacement, which
// is put before the word as prepend_scheme says, and with split each replacement starts a word
// (SplitDelimiterBehavior::MergedWithNext).
void metaspace(const HfPreTokenizerStep& step, const Word& word, std::vector<Word>& out) {
  const std::u32string mark = decode_utf8(step.replacement);
  std::u32string text = replace_all(word.text, U" ", mark);
  const bool prepend = step.prepend == HfPreTokenizerStep::Prepend::Always ||
                       (step.prepend == HfPreTokenizerStep::Prepend::First && word.at_start);
  if (prepend && text.compare(0, mark.size(), mark) != 0) text = mark + text;
  if (!step.split) {
    out.push_back({text, word.at_start});
    return;
  }
  std::size_t from = 0;
  for (std::size_t at = text.find(mark, 1); at != std::u32string::npos; at = text.find(mark, at + 1)) {
    if (at > from) out.push_back({text.substr(from, at - from), word.at_start && from == 0});
    from = at;
  }
  if (from < text.size()) out.push_back({text.substr(from), word.at_start && from == 0});
}

// BertPreTokenizer: whitespace separates words (and is dropped), each punctuation character is a word.
void bert_words(const Word& word, std::vector<Word>& out) {
  std::u32string current;
  const auto flush = [&] {
    if (!current.empty()) out.push_back({current, false});
    current.clear();
  };
  for (const char32_t c : word.text) {
    if (is_white_space(c)) {
      flush();
    } else if (is_bert_punctuation(c)) {
      flush();
      out.push_back({std::u32string(1, c), false});
    } else {
      current += c;
    }
  }
  flush();
}

std::vector<Word> pre_tokenize(const std::vector<HfPreTokenizerStep>& steps, const Word& run) {
  std::vector<Word> words = {run};
  for (const HfPreTokenizerStep& step : steps) {
    std::vector<Word> next;
    for (const Word& word : words) {
      if (step.kind == HfPreTokenizerStep::Kind::Metaspace) metaspace(step, word, next);
      else bert_words(word, next);
    }
    words = std::move(next);
  }
  return words;
}

// --- Models.

class PieceIds {
 public:
  explicit PieceIds(const Vocabulary& vocab) {
    for (std::size_t id = 0; id < vocab.size(); ++id)
      if (!vocab.pieces[id].empty()) ids_.emplace(vocab.pieces[id], static_cast<std::int32_t>(id));
  }
  std::optional<std::int32_t> find(const std::string& piece) const {
    const auto it = ids_.find(piece);
    return it == ids_.end() ? std::nullopt : std::optional<std::int32_t>(it->second);
  }

 private:
  std::unordered_map<std::string, std::int32_t> ids_;
};

std::uint64_t pair_key(std::int32_t left, std::int32_t right) {
  return (static_cast<std::uint64_t>(static_cast<std::uint32_t>(left)) << 32) | static_cast<std::uint32_t>(right);
}

// BPE::merge_word (tokenizers/src/models/bpe/model.rs): each character is its piece, or with
// byte_fallback its bytes' <0xNN> pieces (when all exist), or the unknown token (consecutive
// ones fused with fuse_unk; none without an unk_token: the character is dropped).
Ids bpe_symbols(const Vocabulary& vocab, const PieceIds& pieces, const std::u32string& word) {
  const HfPipeline& hf = vocab.hf;
  Ids symbols;
  bool last_unknown = false;
  for (const char32_t c : word) {
    const std::string utf8 = encode_utf8(std::u32string(1, c));
    if (const auto id = pieces.find(utf8)) {
      symbols.push_back(*id);
      last_unknown = false;
      continue;
    }
    if (hf.byte_fallback) {
      Ids bytes;
      for (const char byte : utf8) {
        char name[8];
        std::snprintf(name, sizeof name, "<0x%02X>", static_cast<unsigned char>(byte));
        if (const auto id = pieces.find(name)) bytes.push_back(*id);
      }
      if (bytes.size() == utf8.size()) {
        symbols.insert(symbols.end(), bytes.begin(), bytes.end());
        last_unknown = false;
        continue;
      }
    }
    if (hf.unk < 0) continue;
    if (!(hf.fuse_unk && last_unknown)) symbols.push_back(hf.unk);
    last_unknown = true;
  }
  return symbols;
}

// Word::merge_all (tokenizers/src/models/bpe/word.rs): the pair with the lowest merge rank
// merges first, the leftmost among equal ranks; a queued pair that has changed since is skipped.
Ids merge_all(const HfPipeline& hf, Ids symbols) {
  struct Candidate {
    std::int32_t rank;
    std::size_t left;
    std::int32_t merged;
    bool operator>(const Candidate& other) const { return rank != other.rank ? rank > other.rank : left > other.left; }
  };
  const std::size_t n = symbols.size();
  std::vector<long> next(n), prev(n);
  std::vector<bool> alive(n, true);
  for (std::size_t i = 0; i < n; ++i) {
    next[i] = i + 1 < n ? static_cast<long>(i + 1) : -1;
    prev[i] = static_cast<long>(i) - 1;
  }
  std::priority_queue<Candidate, std::vector<Candidate>, std::greater<Candidate>> queue;
  const auto push = [&](long left) {
    if (left < 0 || next[static_cast<std::size_t>(left)] < 0) return;
    const auto l = static_cast<std::size_t>(left);
    const auto it = hf.merges.find(pair_key(symbols[l], symbols[static_cast<std::size_t>(next[l])]));
    if (it != hf.merges.end()) queue.push({it->second.first, l, it->second.second});
  };
  for (std::size_t i = 0; i + 1 < n; ++i) push(static_cast<long>(i));
  while (!queue.empty()) {
    const Candidate top = queue.top();
    queue.pop();
    if (!alive[top.left] || next[top.left] < 0) continue;
    const auto right = static_cast<std::size_t>(next[top.left]);
    const auto it = hf.merges.find(pair_key(symbols[top.left], symbols[right]));
    if (it == hf.merges.end() || it->second.second != top.merged) continue;
    symbols[top.left] = top.merged;
    alive[right] = false;
    next[top.left] = next[right];
    if (next[right] >= 0) prev[static_cast<std::size_t>(next[right])] = static_cast<long>(top.left);
    push(prev[top.left]);
    push(static_cast<long>(top.left));
  }
  Ids merged;
  for (std::size_t i = 0; i < n; ++i)
    if (alive[i]) merged.push_back(symbols[i]);
  return merged;
}

void bpe_word(const Vocabulary& vocab, const PieceIds& pieces, const std::u32string& word, Ids& ids) {
  if (vocab.hf.ignore_merges)
    if (const auto id = pieces.find(encode_utf8(word))) {
      ids.push_back(*id);
      return;
    }
  const Ids merged = merge_all(vocab.hf, bpe_symbols(vocab, pieces, word));
  ids.insert(ids.end(), merged.begin(), merged.end());
}

std::int32_t wordpiece_unknown(const Vocabulary& vocab, const std::u32string& word) {
  if (vocab.hf.unk < 0)
    throw InputError::inconsistent(vocabulary_name(vocab), "word \"" + encode_utf8(word) +
                                                               "\" has no pieces and /model/unk_token is not in the vocabulary");
  return vocab.hf.unk;
}

// WordPiece::tokenize (tokenizers/src/models/wordpiece/mod.rs): the longest piece from the
// start, then the longest continuation ("##…") from there; a word with no full cover, or longer
// than max_input_chars_per_word characters, is one unknown token.
void wordpiece_word(const Vocabulary& vocab, const PieceIds& pieces, const std::u32string& word, Ids& ids) {
  const HfPipeline& hf = vocab.hf;
  if (word.size() > hf.max_input_chars_per_word) {
    ids.push_back(wordpiece_unknown(vocab, word));
    return;
  }
  Ids found;
  for (std::size_t start = 0; start < word.size();) {
    std::size_t end = word.size();
    std::optional<std::int32_t> id;
    for (; end > start; --end) {
      const std::string piece = (start > 0 ? hf.continuing_subword_prefix : "") + encode_utf8(word.substr(start, end - start));
      if ((id = pieces.find(piece))) break;
    }
    if (!id) {
      ids.push_back(wordpiece_unknown(vocab, word));
      return;
    }
    found.push_back(*id);
    start = end;
  }
  ids.insert(ids.end(), found.begin(), found.end());
}

}  // namespace

NormalizedText hf_normalize(const std::vector<HfNormalizerStep>& steps, std::u32string text) {
  using Kind = HfNormalizerStep::Kind;
  bool keeps_start = true;
  for (const HfNormalizerStep& step : steps) {
    switch (step.kind) {
      case Kind::Prepend:
        if (!text.empty()) text = decode_utf8(step.content) + text;
        break;
      case Kind::Replace: {
        // A match at the start replaced by nothing deletes the first character.
        const std::u32string pattern = decode_utf8(step.pattern);
        if (step.content.empty() && !pattern.empty() && text.compare(0, pattern.size(), pattern) == 0) keeps_start = false;
        text = replace_all(text, pattern, decode_utf8(step.content));
        break;
      }
      case Kind::Nfc: text = normalization_form(text, UTF8PROC_COMPOSE); break;
      case Kind::Nfd: text = normalization_form(text, UTF8PROC_DECOMPOSE); break;
      case Kind::Nfkc: text = normalization_form(text, UTF8PROC_COMPOSE | UTF8PROC_COMPAT); break;
      case Kind::Nfkd: text = normalization_form(text, UTF8PROC_DECOMPOSE | UTF8PROC_COMPAT); break;
      case Kind::Lowercase: text = lowercase(text); break;
      case Kind::Bert: text = bert_normalize(step, std::move(text), keeps_start); break;
    }
  }
  return {std::move(text), keeps_start};
}

std::vector<std::int32_t> tokenize_hf(const Vocabulary& vocab, std::string_view text, bool add_special, bool parse_special) {
  const HfPipeline& hf = vocab.hf;
  const PieceIds pieces(vocab);
  const bool wordpiece = vocab.model == "hf-wordpiece";
  Ids ids;
  if (add_special) ids = hf.prefix;
  const auto normalize = [&hf](const std::u32string& raw) { return hf_normalize(hf.normalizer, raw); };
  for (const AddedSection& section : extract_added(hf, text, normalize, parse_special)) {
    if (section.token) {
      ids.push_back(*section.token);
      continue;
    }
    for (const Word& word : pre_tokenize(hf.pre_tokenizer, {section.text, section.at_start})) {
      if (wordpiece) wordpiece_word(vocab, pieces, word.text, ids);
      else bpe_word(vocab, pieces, word.text, ids);
    }
  }
  if (add_special) ids.insert(ids.end(), hf.suffix.begin(), hf.suffix.end());
  return ids;
}

}  // namespace attnviz
