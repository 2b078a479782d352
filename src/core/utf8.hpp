// UTF-8 <-> code points, for drawing labels and for the tokenizers. Decodes defensively: the input loader already
// rejects invalid UTF-8, but any malformed, overlong or surrogate sequence that still arrives
// becomes U+FFFD (one per bad byte) instead of undefined behaviour. Does not normalise text.
#pragma once

#include <string>
#include <string_view>

namespace attnviz {

inline constexpr char32_t kReplacementCharacter = U'\uFFFD';

/// The code points of `utf8`; each byte that does not start a valid sequence gives U+FFFD.
std::u32string decode_utf8(std::string_view utf8);

/// The UTF-8 encoding of `code_points` (invalid code points are encoded as U+FFFD).
std::string encode_utf8(std::u32string_view code_points);

/// "U+XXXX" (at least four upper-case hex digits), the way warnings name a code point.
std::string code_point_name(char32_t code_point);

}  // namespace attnviz
