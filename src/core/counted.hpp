// Counts in messages and titles: "1 head", "3 heads" (never "1 heads").
#pragma once

#include <string>
#include <string_view>

namespace attnviz {

/// `n` and the noun, plural unless n is 1: counted(1, "head") = "1 head",
/// counted(3, "head") = "3 heads", counted(2, "query", "queries") = "2 queries".
/// The plural is the singular + "s" unless given.
inline std::string counted(long long n, std::string_view singular, std::string_view plural = {}) {
  if (n == 1) return "1 " + std::string(singular);
  return std::to_string(n) + " " + (plural.empty() ? std::string(singular) + "s" : std::string(plural));
}

}  // namespace attnviz
