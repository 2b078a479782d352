#include "render/bidi.hpp"

#include <fribidi.h>

#include <algorithm>
#include <numeric>

namespace attnviz {

std::vector<std::uint8_t> bidi_levels(const std::u32string& text) {
  const auto n = static_cast<FriBidiStrIndex>(text.size());
  std::vector<FriBidiChar> chars(text.begin(), text.end());
  std::vector<FriBidiCharType> types(text.size());
  std::vector<FriBidiBracketType> brackets(text.size());
  std::vector<FriBidiLevel> levels(text.size());
  fribidi_get_bidi_types(chars.data(), n, types.data());
  fribidi_get_bracket_types(chars.data(), n, types.data(), brackets.data());
  FriBidiParType direction = FRIBIDI_PAR_ON;  // from the first strong character, else LTR
  if (n > 0 && fribidi_get_par_embedding_levels_ex(types.data(), brackets.data(), n, &direction, levels.data()) == 0) {
    std::fill(levels.begin(), levels.end(), 0);  // allocation failure inside FriBiDi: logical order
  }
  return std::vector<std::uint8_t>(levels.begin(), levels.end());
}

bool is_bidi_control(char32_t cp) {
  return cp == 0x200E || cp == 0x200F || cp == 0x061C || (cp >= 0x202A && cp <= 0x202E) ||
         (cp >= 0x2066 && cp <= 0x2069);
}

std::vector<std::size_t> visual_run_order(const std::vector<std::uint8_t>& run_levels) {
  std::vector<std::size_t> order(run_levels.size());
  std::iota(order.begin(), order.end(), 0);
  if (run_levels.empty()) return order;
  const std::uint8_t highest = *std::max_element(run_levels.begin(), run_levels.end());
  std::uint8_t lowest_odd = highest;
  for (const std::uint8_t level : run_levels) {
    if (level % 2 == 1) lowest_odd = std::min(lowest_odd, level);
  }
  if (highest % 2 == 0 && lowest_odd == highest) lowest_odd = highest + 1;  // no odd level: nothing turns
  for (int level = highest; level >= lowest_odd; --level) {
    std::size_t i = 0;
    while (i < order.size()) {
      if (run_levels[order[i]] < level) {
        ++i;
        continue;
      }
      std::size_t end = i;
      while (end < order.size() && run_levels[order[end]] >= level) ++end;
      std::reverse(order.begin() + static_cast<std::ptrdiff_t>(i), order.begin() + static_cast<std::ptrdiff_t>(end));
      i = end;
    }
  }
  return order;
}

}  // namespace attnviz
