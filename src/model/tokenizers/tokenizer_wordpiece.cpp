#include "model/tokenizers/tokenizer_wordpiece.hpp"

#include <algorithm>
#include <array>

#include <utf8proc.h>

#include "core/error.hpp"
#include "core/utf8.hpp"
#include "model/tokenizers/piece_index.hpp"
#include "model/tokenizers/text_fragments.hpp"

namespace attnviz {

namespace {

constexpr std::string_view kWordStart = "\xE2\x96\x81";  // "▁": llama.cpp's converter marks word-initial pieces
constexpr std::size_t kMaxDecompositionUnits = 4;        // longest canonical decomposition is 4 code points

// The CJK ranges BERT's _is_chinese_char treats as words of their own (llama.cpp copies them,
// with Hugging Face's 0x2B920 for the fifth range).
bool is_cjk_ideograph(char32_t c) {
  return (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x3400 && c <= 0x4DBF) || (c >= 0x20000 && c <= 0x2A6DF) ||
         (c >= 0x2A700 && c <= 0x2B73F) || (c >= 0x2B740 && c <= 0x2B81F) || (c >= 0x2B920 && c <= 0x2CEAF) ||
         (c >= 0xF900 && c <= 0xFAFF) || (c >= 0x2F800 && c <= 0x2FA1F);
}

// The first code point of c's NFD decomposition ("é" -> "e"): llama.cpp's accent stripping
// keeps only that one (its unicode_cpts_normalize_nfd table) and then drops marks.
char32_t nfd_first(char32_t c) {
  std::array<utf8proc_int32_t, kMaxDecompositionUnits> units{};
  int boundclass = 0;
  const utf8proc_ssize_t length = utf8proc_decompose_char(static_cast<utf8proc_int32_t>(c), units.data(),
                                                          static_cast<utf8proc_ssize_t>(units.size()), UTF8PROC_DECOMPOSE,
                                                          &boundclass);
  return length >= 1 ? static_cast<char32_t>(units[0]) : c;
}

// Unicode's White_Space property: the Z categories and the control characters it lists.
bool is_white_space(char32_t c, utf8proc_category_t category) {
  return (c >= 0x09 && c <= 0x0D) || c == 0x85 || category == UTF8PROC_CATEGORY_ZS || category == UTF8PROC_CATEGORY_ZL ||
         category == UTF8PROC_CATEGORY_ZP;
}

bool is_other(utf8proc_category_t k) {  // C*: control, format, surrogate, private use, unassigned
  return k == UTF8PROC_CATEGORY_CC || k == UTF8PROC_CATEGORY_CF || k == UTF8PROC_CATEGORY_CS || k == UTF8PROC_CATEGORY_CO ||
         k == UTF8PROC_CATEGORY_CN;
}
bool is_mark(utf8proc_category_t k) {
  return k == UTF8PROC_CATEGORY_MN || k == UTF8PROC_CATEGORY_MC || k == UTF8PROC_CATEGORY_ME;
}
bool is_symbol(utf8proc_category_t k) {
  return k == UTF8PROC_CATEGORY_SM || k == UTF8PROC_CATEGORY_SC || k == UTF8PROC_CATEGORY_SK || k == UTF8PROC_CATEGORY_SO;
}
bool is_punctuation(utf8proc_category_t k) {
  return k == UTF8PROC_CATEGORY_PC || k == UTF8PROC_CATEGORY_PD || k == UTF8PROC_CATEGORY_PS || k == UTF8PROC_CATEGORY_PE ||
         k == UTF8PROC_CATEGORY_PI || k == UTF8PROC_CATEGORY_PF || k == UTF8PROC_CATEGORY_PO;
}

std::string utf8_of(char32_t c) { return encode_utf8(std::u32string(1, c)); }

// Appends to `ids` the longest-match pieces of "▁" + word, or one unknown token.
void tokenize_word(const Vocabulary& vocab, const PieceIndex& index, const std::string& word,
                   std::vector<std::int32_t>& ids) {
  const std::string marked = std::string(kWordStart) + word;
  const std::size_t n = marked.size();
  const std::size_t start = ids.size();
  for (std::size_t i = 0; i < n;) {
    std::size_t end = std::min(n, i + index.max_piece_bytes() + 1);
    for (; end > i; --end) {
      if (const auto id = index.find(std::string_view(marked).substr(i, end - i))) {
        ids.push_back(*id);
        break;
      }
    }
    if (end == i) {  // no piece starts here: the whole word is unknown
      ids.resize(start);
      break;
    }
    i = end;
  }
  if (ids.size() > start) return;
  if (!vocab.unk) {
    throw InputError::inconsistent(vocabulary_name(vocab),
                                   "word \"" + word + "\" has no pieces and there is no unknown token");
  }
  ids.push_back(*vocab.unk);
}

}  // namespace

std::vector<std::string> wordpiece_words(std::string_view text, bool lowercase, bool strip_accents) {
  std::vector<std::string> words(1);
  for (char32_t c : decode_utf8(text)) {
    if (strip_accents) c = nfd_first(c);
    const utf8proc_category_t category = utf8proc_category(static_cast<utf8proc_int32_t>(c));
    if (is_white_space(c, category)) {
      if (!words.back().empty()) words.emplace_back();
      continue;
    }
    if (c == 0 || c == kReplacementCharacter || is_other(category)) continue;
    if (strip_accents && is_mark(category)) continue;
    const std::string utf8 = utf8_of(lowercase ? static_cast<char32_t>(utf8proc_tolower(static_cast<utf8proc_int32_t>(c))) : c);
    const bool ascii_symbol = c < 0x7F && is_symbol(category);
    if (is_punctuation(category) || ascii_symbol || is_cjk_ideograph(c)) {
      if (!words.back().empty()) words.emplace_back();
      words.back() = utf8;
      words.emplace_back();
    } else {
      words.back() += utf8;
    }
  }
  if (words.back().empty()) words.pop_back();
  return words;
}

std::vector<std::int32_t> tokenize_wordpiece(const Vocabulary& vocab, std::string_view text, bool add_special, bool parse_special) {
  std::vector<std::int32_t> ids;
  const std::optional<std::int32_t> cls = vocab.bos ? vocab.bos : vocab.cls;
  if (add_special && cls) ids.push_back(*cls);
  const PieceIndex index(vocab);
  for (const TextFragment& fragment : split_at_special_tokens(vocab, text, parse_special)) {
    if (fragment.token) {
      ids.push_back(*fragment.token);
      continue;
    }
    for (const std::string& word : wordpiece_words(fragment.text, vocab.lowercase, vocab.strip_accents)) {
      tokenize_word(vocab, index, word, ids);
    }
  }
  if (add_special && vocab.sep) ids.push_back(*vocab.sep);
  return ids;
}

}  // namespace attnviz
