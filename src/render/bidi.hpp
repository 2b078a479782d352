// The Unicode Bidirectional Algorithm (UAX #9) for one label, via FriBiDi: the embedding level
// of each code point (even = left to right, odd = right to left), explicit marks and
// embeddings (LRM, RLM, ALM, LRE/RLE/LRO/RLO/PDF, LRI/RLI/FSI/PDI) honoured, and the visual
// order of runs. Does not shape or draw (font.cpp does).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace attnviz {

/// Resolved embedding level of each code point of `text`, one paragraph whose direction is that
/// of its first strong character (left to right when it has none). Explicit formatting
/// characters get the level of their neighbourhood; they are never drawn (is_bidi_control).
std::vector<std::uint8_t> bidi_levels(const std::u32string& text);

/// True for the explicit directional formatting characters: LRM, RLM, ALM, LRE, RLE, PDF, LRO,
/// RLO, LRI, RLI, FSI, PDI. They steer the order and draw nothing.
bool is_bidi_control(char32_t code_point);

/// Rule L2 on runs: given each run's level in logical order, the run indices in visual order,
/// left to right (from the highest level down to the lowest odd level, every maximal sequence
/// of runs at that level or above is reversed).
std::vector<std::size_t> visual_run_order(const std::vector<std::uint8_t>& run_levels);

}  // namespace attnviz
