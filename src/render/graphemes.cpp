#include "render/graphemes.hpp"

#include <utf8proc.h>

namespace attnviz {

std::vector<std::size_t> grapheme_starts(const std::u32string& text) {
  std::vector<std::size_t> starts;
  if (text.empty()) return starts;
  starts.push_back(0);
  utf8proc_int32_t state = 0;  // UAX #29 rules GB11–GB13 (emoji ZWJ sequences, flags) need it
  for (std::size_t i = 1; i < text.size(); ++i) {
    if (utf8proc_grapheme_break_stateful(static_cast<utf8proc_int32_t>(text[i - 1]),
                                         static_cast<utf8proc_int32_t>(text[i]), &state)) {
      starts.push_back(i);
    }
  }
  return starts;
}

bool is_default_ignorable(char32_t code_point) {
  return utf8proc_get_property(static_cast<utf8proc_int32_t>(code_point))->ignorable != 0;
}

}  // namespace attnviz
