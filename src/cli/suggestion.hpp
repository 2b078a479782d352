// "Did you mean …?": the nearest of a list of names to a misspelt word (a command, a flag).
// Pure string work, so it is testable without CLI11; command_line.cpp decides where to use it.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace attnviz {

/// Levenshtein distance between `a` and `b` in bytes (Wagner and Fischer 1974): insertions,
/// deletions and substitutions each cost 1.
std::size_t edit_distance(const std::string& a, const std::string& b);

/// The name of `names` a user most likely meant by `word`, compared without leading dashes
/// ("--modle" against "--model"): the one at the smallest edit distance when that distance is
/// at most 3 and at most half the word's length ("--layer" -> "--layers", "--txt" -> "--text";
/// "-x" suggests nothing), or else the only name that starts with the word ("--rollout-res" ->
/// "--rollout-residual"). Ties go to the earlier name. nullopt when none qualifies, or when
/// `word` is itself one of `names`.
std::optional<std::string> nearest_name(const std::string& word, const std::vector<std::string>& names);

}  // namespace attnviz
