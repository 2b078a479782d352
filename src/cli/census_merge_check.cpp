#include "cli/census_merge_check.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <tuple>

namespace attnviz {

namespace {

using Json = nlohmann::json;  // unordered: members compared by name, not position

// Appends "PREFIX.member: A in a, B in b" for every member of `a` and `b` that differs.
void differences(const std::string& prefix, const Json& a, const Json& b, const std::string& a_source, const std::string& b_source,
                 std::string& out) {
  if (a == b) return;
  const auto add = [&](const std::string& name, const std::string& a_text, const std::string& b_text) {
    out += (out.empty() ? "" : "; ") + name + ": " + a_text + " in " + a_source + ", " + b_text + " in " + b_source;
  };
  if (!a.is_object() || !b.is_object()) return add(prefix, a.dump(), b.dump());
  for (const auto& [key, value] : a.items()) {
    const auto other = b.find(key);
    if (other == b.end()) add(prefix + "." + key, value.dump(), "nothing");
    else if (*other != value) add(prefix + "." + key, value.dump(), other->dump());
  }
  for (const auto& [key, value] : b.items())
    if (!a.contains(key)) add(prefix + "." + key, "nothing", value.dump());
}

}  // namespace

std::string provenance_differences(const CensusProvenance& a, const CensusProvenance& b, const std::string& a_source,
                                   const std::string& b_source) {
  std::string out;
  differences("attnviz_version", Json(a.attnviz_version), Json(b.attnviz_version), a_source, b_source, out);
  differences("model", Json::parse(a.model), Json::parse(b.model), a_source, b_source, out);
  differences("corpus", Json::parse(a.corpus), Json::parse(b.corpus), a_source, b_source, out);
  differences("settings", Json::parse(a.settings), Json::parse(b.settings), a_source, b_source, out);
  return out;
}

std::optional<SharedText> first_shared_text(const std::vector<IndexRanges>& inputs) {
  std::vector<std::tuple<long, long, std::size_t>> ranges;  // first, last, input
  for (std::size_t i = 0; i < inputs.size(); ++i)
    for (const auto& [first, last] : inputs[i]) ranges.emplace_back(first, last, i);
  std::sort(ranges.begin(), ranges.end());
  // Sweeping by first index: a range starting at or before the furthest end seen so far shares
  // its first index with the range that reaches that end. The first such start is the lowest
  // shared index, since a shared index is the later start of two overlapping ranges.
  std::optional<SharedText> found;
  long reach = -1;
  std::size_t reach_input = 0;
  for (const auto& [first, last, input] : ranges) {
    if (first <= reach) {
      found = SharedText{first, std::min(input, reach_input), std::max(input, reach_input)};
      return found;
    }
    if (last > reach) {
      reach = last;
      reach_input = input;
    }
  }
  return found;
}

}  // namespace attnviz
