#include "model/tokenizer_wordpiece.hpp"

#include <algorithm>
#include <array>

#include <unicode/uchar.h>
#include <unicode/unorm2.h>
#include <unicode/utf16.h>

#include "core/error.hpp"
#include "model/piece_index.hpp"
#include "model/text_fragments.hpp"
#include "render/utf8.hpp"

namespace attnviz {

namespace {

constexpr std::string_view kWordStart = "\xE2\x96\x81";  // "▁": llama.cpp's converter marks word-initial pieces
constexpr std::size_t kMaxDecompositionUnits = 32;       // longest canonical decomposition is 4 code points

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
  UErrorCode status = U_ZERO_ERROR;
  const UNormalizer2* nfd = unorm2_getNFDInstance(&status);
  std::array<UChar, kMaxDecompositionUnits> units{};
  const int32_t length = U_SUCCESS(status) ? unorm2_getDecomposition(nfd, static_cast<UChar32>(c), units.data(),
                                                                     static_cast<int32_t>(units.size()), &status)
                                           : -1;
  if (U_FAILURE(status) || length <= 0) return c;
  UChar32 first = 0;
  int32_t offset = 0;
  U16_NEXT(units.data(), offset, length, first);
  return static_cast<char32_t>(first);
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
    const auto category = static_cast<uint32_t>(U_GET_GC_MASK(static_cast<UChar32>(c)));
    if (u_isUWhiteSpace(static_cast<UChar32>(c))) {
      if (!words.back().empty()) words.emplace_back();
      continue;
    }
    if (c == 0 || c == kReplacementCharacter || (category & U_GC_C_MASK)) continue;
    if (strip_accents && (category & U_GC_M_MASK)) continue;
    const std::string utf8 = utf8_of(lowercase ? static_cast<char32_t>(u_tolower(static_cast<UChar32>(c))) : c);
    const bool ascii_symbol = c < 0x7F && (category & U_GC_S_MASK);
    if ((category & U_GC_P_MASK) || ascii_symbol || is_cjk_ideograph(c)) {
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

std::vector<std::int32_t> tokenize_wordpiece(const Vocabulary& vocab, std::string_view text, bool add_special) {
  std::vector<std::int32_t> ids;
  const std::optional<std::int32_t> cls = vocab.bos ? vocab.bos : vocab.cls;
  if (add_special && cls) ids.push_back(*cls);
  const PieceIndex index(vocab);
  for (const TextFragment& fragment : split_at_user_defined_tokens(vocab, text)) {
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
