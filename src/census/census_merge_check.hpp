// Whether census outputs belong together before `census --merge` combines them (issue 22): the
// same provenance, and no text counted by two of them. Each message names the files concerned
// and what differs; each file on its own is census_check's.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "census/corpus_census.hpp"

namespace attnviz {

/// Where two provenances differ, member by member: "settings.sink_epsilon: 0.3 in A, 0.5 in
/// B", several joined by "; ", or "" when they agree. The parts (attnviz_version, model,
/// corpus, settings) are compared as JSON, so a member's order or spacing is no difference.
std::string provenance_differences(const CensusProvenance& a, const CensusProvenance& b, const std::string& a_source,
                                   const std::string& b_source);

/// Throws InputError naming `b_source`, `a_source` and each member that differs
/// (provenance_differences) unless `a` and `b` agree: only outputs of the same model, corpus,
/// settings and attnviz version merge.
void require_same_provenance(const CensusProvenance& a, const CensusProvenance& b, const std::string& a_source,
                             const std::string& b_source);

/// Throws InputError naming `folder` when the census journal at `journal_path` (its texts.jsonl)
/// was written by another run than `census_provenance` (its census.json's, read from
/// `census_path`): a folder where one run's census.json sits beside another run's journal is
/// unfinished or mixed, and its census.json is not the run the journal records. A journal that
/// cannot be read, or whose header is not JSON, counts as another run's; so does one of a shard
/// K/N that does not hold every text in `covered` (the census.json's ranges).
void require_journal_of_census(const std::string& folder, const std::string& journal_path, const CensusProvenance& census_provenance,
                               const IndexRanges& covered, const std::string& census_path);

/// A text two inputs both cover: the lowest such index, and the two inputs (first < second,
/// indices into `inputs`).
struct SharedText {
  long text = 0;
  std::size_t first = 0, second = 0;
};

/// The lowest text index covered by two of `inputs` (each sorted, disjoint ranges), naming two
/// inputs that really both hold it; nullopt when none is. O(R log N) for R ranges in N inputs.
std::optional<SharedText> first_shared_text(const std::vector<IndexRanges>& inputs);

/// Throws InputError naming the two of `sources` (one per input) that cover first_shared_text,
/// and the text, when there is one: a text may be counted once.
void require_disjoint(const std::vector<IndexRanges>& inputs, const std::vector<std::string>& sources);

}  // namespace attnviz
