#include "records/census_output.hpp"

#include <nlohmann/json.hpp>

#include "records/head_stat_fields.hpp"

namespace attnviz {

namespace {

using ordered_json = nlohmann::ordered_json;

ordered_json optional_number(const std::optional<double>& x) { return x ? ordered_json(*x) : ordered_json(nullptr); }

bool any_induction(const std::vector<CensusRow>& rows) {
  for (const CensusRow& row : rows)
    if (row.induction) return true;
  return false;
}

// Encoder-decoder rows carry their block; the stack and kind columns are written then.
bool any_stack(const std::vector<CensusRow>& rows) {
  for (const CensusRow& row : rows)
    if (!row.stack.empty()) return true;
  return false;
}

}  // namespace

std::string census_to_csv(const std::vector<CensusRow>& rows) {
  const bool blocks = any_stack(rows);
  std::string csv = blocks ? "stack,kind,layer,head" : "layer,head";
  for (const HeadStatField& field : head_stat_fields()) csv += std::string(",") + field.name;
  csv += ",induction_score\n";
  for (const CensusRow& r : rows) {
    if (blocks) csv += r.stack + "," + r.kind + ",";
    csv += std::to_string(r.layer) + "," + std::to_string(r.head);
    for (const HeadStatField& field : head_stat_fields()) csv += "," + csv_statistic(field.value(r.stats));
    csv += "," + csv_statistic(r.induction) + "\n";
  }
  return csv;
}

std::string census_to_json(const std::vector<CensusRow>& rows) {
  const bool blocks = any_stack(rows);
  ordered_json heads = ordered_json::array();
  for (const CensusRow& r : rows) {
    ordered_json head = ordered_json::object();  // keys in the order they are set
    if (blocks) {
      head["stack"] = r.stack;
      head["kind"] = r.kind;
    }
    head["layer"] = r.layer;
    head["head"] = r.head;
    for (const HeadStatField& field : head_stat_fields()) head[field.name] = optional_number(field.value(r.stats));
    head["induction_score"] = optional_number(r.induction);
    heads.push_back(head);
  }
  ordered_json document = {{"units", {{"entropy", "nats"}, {"mean_distance", "tokens"}, {"masses", "mean weight"}}}};
  if (!any_induction(rows)) document["induction_score"] = "null: the text repeats no token, so there is nothing to measure";
  document["heads"] = heads;
  return document.dump(2) + "\n";
}

}  // namespace attnviz
