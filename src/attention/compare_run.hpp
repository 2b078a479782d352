// One run `compare` puts beside another: an attention record with its label ("" for a single
// run, "A" and "B" for two) and, for heads of several layers, their names.
#pragma once

#include <string>
#include <vector>

#include "attention/attention_record.hpp"

namespace attnviz {

/// One run to compare, labelled "" for a single run and "A", "B" for two.
struct CompareRun {
  std::string label;
  AttentionRecord record;
  std::vector<std::string> names;  ///< per head, when not record.head_name (heads of several layers)
};

/// The head's name: names[head] when given, else record.head_name(head).
std::string head_name(const CompareRun& run, int head);

/// The head's name after the run's label: "A · L0H3", or "L0H3" for a single run.
std::string head_label(const CompareRun& run, int head);

}  // namespace attnviz
