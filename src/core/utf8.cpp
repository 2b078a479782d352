#include "core/utf8.hpp"

#include <cstdint>
#include <cstdio>

namespace attnviz {

namespace {

// Byte patterns and limits from RFC 3629 §3 and §4 (UTF-8).
constexpr char32_t kMaxCodePoint = 0x10FFFF;
constexpr char32_t kSurrogateFirst = 0xD800;
constexpr char32_t kSurrogateLast = 0xDFFF;
// Smallest code point that needs 1, 2, 3 and 4 bytes; anything smaller is overlong.
constexpr char32_t kMinForLength[] = {0, 0, 0x80, 0x800, 0x10000};

bool is_continuation(unsigned char byte) { return (byte & 0xC0) == 0x80; }

// Length of the sequence that `lead` starts (1..4), or 0 if it cannot start one.
int sequence_length(unsigned char lead) {
  if (lead < 0x80) return 1;
  if ((lead & 0xE0) == 0xC0) return 2;
  if ((lead & 0xF0) == 0xE0) return 3;
  if ((lead & 0xF8) == 0xF0) return 4;
  return 0;
}

bool is_valid_code_point(char32_t cp) {
  return cp <= kMaxCodePoint && (cp < kSurrogateFirst || cp > kSurrogateLast);
}

}  // namespace

std::u32string decode_utf8(std::string_view utf8) {
  static constexpr unsigned char kLeadMasks[] = {0, 0x7F, 0x1F, 0x0F, 0x07};
  std::u32string out;
  out.reserve(utf8.size());
  std::size_t i = 0;
  while (i < utf8.size()) {
    const auto lead = static_cast<unsigned char>(utf8[i]);
    const int length = sequence_length(lead);
    bool ok = length > 0 && i + static_cast<std::size_t>(length) <= utf8.size();
    char32_t cp = ok ? (lead & kLeadMasks[length]) : 0;
    for (int k = 1; ok && k < length; ++k) {
      const auto byte = static_cast<unsigned char>(utf8[i + static_cast<std::size_t>(k)]);
      ok = is_continuation(byte);
      cp = (cp << 6) | (byte & 0x3F);
    }
    ok = ok && cp >= kMinForLength[length] && is_valid_code_point(cp);
    out.push_back(ok ? cp : kReplacementCharacter);
    i += ok ? static_cast<std::size_t>(length) : 1;
  }
  return out;
}

std::string encode_utf8(std::u32string_view code_points) {
  std::string out;
  for (char32_t cp : code_points) {
    if (!is_valid_code_point(cp)) cp = kReplacementCharacter;
    if (cp < 0x80) {
      out.push_back(static_cast<char>(cp));
    } else if (cp < 0x800) {
      out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
      out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else if (cp < 0x10000) {
      out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
      out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
      out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else {
      out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
      out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
      out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
      out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    }
  }
  return out;
}

std::string code_point_name(char32_t code_point) {
  char text[16];
  std::snprintf(text, sizeof text, "U+%04X", static_cast<std::uint32_t>(code_point));
  return text;
}

}  // namespace attnviz
