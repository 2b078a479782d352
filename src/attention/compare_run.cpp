#include "attention/compare_run.hpp"

namespace attnviz {

std::string head_name(const CompareRun& run, int head) {
  return run.names.empty() ? run.record.head_name(head) : run.names[static_cast<std::size_t>(head)];
}

std::string head_label(const CompareRun& run, int head) {
  return (run.label.empty() ? "" : run.label + " · ") + head_name(run, head);
}

}  // namespace attnviz
