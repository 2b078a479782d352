// Splitting UTF-8 text into characters the way llama.cpp's tokenizers do (unicode_len_utf8):
// the lead byte's high bits give the length, clipped at the end of the text, and nothing is
// validated, so any byte string splits and joins back to itself. Internal to model/.
#pragma once

#include <cstddef>
#include <string_view>

namespace attnviz {

/// Bytes of the UTF-8 sequence starting with `lead`: 1 (ASCII, or a stray continuation
/// byte), 2, 3 or 4.
inline std::size_t utf8_char_length(unsigned char lead) {
  if (lead < 0xC0) return 1;
  if (lead < 0xE0) return 2;
  if (lead < 0xF0) return 3;
  return 4;
}

/// Length of the character at `offset` of `text`, clipped at the end of `text`.
inline std::size_t utf8_char_length_at(std::string_view text, std::size_t offset) {
  const std::size_t length = utf8_char_length(static_cast<unsigned char>(text[offset]));
  return length < text.size() - offset ? length : text.size() - offset;
}

}  // namespace attnviz
