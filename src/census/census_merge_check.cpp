#include "census/census_merge_check.hpp"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <functional>
#include <queue>
#include <nlohmann/json.hpp>
#include <tuple>

#include "core/error.hpp"

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

// "" when the journal's shard "K/N" holds every text of `covered`, else what differs.
std::string shard_difference(const Json& shard, const IndexRanges& covered, const std::string& census_path) {
  long k = -1, n = 0;
  if (shard.is_string() && std::sscanf(shard.get<std::string>().c_str(), "%ld/%ld", &k, &n) == 2 && n >= 1 && k >= 0 && k < n) {
    for (const auto& [first, last] : covered)
      for (long text = first; text <= last && text < first + n; ++text)  // n indices meet every residue
        if (text % n != k)
          return census_path + " covers text " + std::to_string(text) + ", which the journal's shard " + shard.get<std::string>() +
                 " does not hold";
    return "";
  }
  return "shard: " + shard.dump() + " in the journal, not K/N";
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

void require_same_provenance(const CensusProvenance& a, const CensusProvenance& b, const std::string& a_source,
                             const std::string& b_source) {
  const std::string differ = provenance_differences(a, b, a_source, b_source);
  if (!differ.empty())
    throw InputError::inconsistent(b_source, "does not match " + a_source + ": " + differ +
                                                 "; only outputs of the same model, corpus, settings and attnviz version merge");
}

void require_journal_of_census(const std::string& folder, const std::string& journal_path, const CensusProvenance& census_provenance,
                               const IndexRanges& covered, const std::string& census_path) {
  std::ifstream in(journal_path, std::ios::binary);
  std::string first_line;
  std::getline(in, first_line);
  Json header;
  try {
    header = Json::parse(first_line, nullptr, false);
  } catch (const Json::exception&) {  // a number beyond double's range (1e999) throws even so: no header
    header = Json();
  }
  const auto part = [&](const char* key) { return header.is_object() && header.contains(key) ? header[key] : Json(); };
  std::string differ;
  if (part("format") != "attnviz.census.texts") {
    differ = journal_path + ": its first line is not a census journal's header";
  } else if (part("version") != kCensusVersion) {
    differ = "version: " + std::to_string(kCensusVersion) + " in " + census_path + ", " + part("version").dump() + " in " + journal_path;
  } else {
    CensusProvenance journal;
    journal.attnviz_version = part("attnviz_version").is_string() ? part("attnviz_version").get<std::string>() : part("attnviz_version").dump();
    journal.model = part("model").dump();
    journal.corpus = part("corpus").dump();
    journal.settings = part("settings").dump();
    differ = provenance_differences(census_provenance, journal, census_path, journal_path);
    if (differ.empty()) differ = shard_difference(part("shard"), covered, census_path);
  }
  if (!differ.empty())
    throw InputError::inconsistent(folder, "holds a census.json and a census journal of another run (" + differ +
                                               "): an unfinished or mixed folder; finish its run with --resume, or merge a folder "
                                               "that holds one run's output");
}

std::optional<SharedText> first_shared_text(const std::vector<IndexRanges>& inputs) {
  // The inputs' ranges in order of first index, by a k-way merge (a heap holds each input's next
  // range): a range starting at or before the furthest end seen so far shares its first index
  // with the range that reaches that end. The first such start is the lowest shared index, since
  // a shared index is the later start of two overlapping ranges.
  using Next = std::tuple<long, long, std::size_t, std::size_t>;  // first, last, input, position in it
  std::priority_queue<Next, std::vector<Next>, std::greater<>> next;
  for (std::size_t i = 0; i < inputs.size(); ++i)
    if (!inputs[i].empty()) next.emplace(inputs[i][0].first, inputs[i][0].second, i, 0);
  long reach = -1;
  std::size_t reach_input = 0;
  while (!next.empty()) {
    const auto [first, last, input, position] = next.top();
    next.pop();
    if (first <= reach) return SharedText{first, std::min(input, reach_input), std::max(input, reach_input)};
    if (last > reach) {
      reach = last;
      reach_input = input;
    }
    const IndexRanges& ranges = inputs[input];
    if (position + 1 < ranges.size()) next.emplace(ranges[position + 1].first, ranges[position + 1].second, input, position + 1);
  }
  return std::nullopt;
}

void require_disjoint(const std::vector<IndexRanges>& inputs, const std::vector<std::string>& sources) {
  if (const std::optional<SharedText> shared = first_shared_text(inputs))
    throw InputError::inconsistent(sources.at(shared->second), "covers text " + std::to_string(shared->text) + ", which " +
                                                                   sources.at(shared->first) + " covers too: a text may be counted "
                                                                   "once (the same shard given twice?)");
}

}  // namespace attnviz
