// Every member a dump can have is documented (issue 34 §3: `scores_masked` was not): the
// members' sets the readers know (record_members_written, model_dump_members, …) against the
// documentation's tables, and real dumps with every optional part turned on against the sets, so
// that a member a writer adds fails here until both the set and the page name it.
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "records/model_dump.hpp"
#include "records/record_json.hpp"
#include "support/run_support.hpp"
#include "support/test_support.hpp"

using namespace attnviz;

namespace {

std::string docs_page(const std::string& name) {
  return test::read_file((std::filesystem::path(ATTNVIZ_TESTS_DIR).parent_path() / "docs" / name).string());
}

// The section of `page` from its heading `## title` to the next `## `.
std::string section(const std::string& page, const std::string& title) {
  const std::size_t start = page.find("\n## " + title + "\n");
  REQUIRE(start != std::string::npos);
  const std::size_t end = page.find("\n## ", start + 4);
  return page.substr(start, end == std::string::npos ? std::string::npos : end - start);
}

// The table rows of `text` ("| first | second |"), as their cells.
std::vector<std::vector<std::string>> table_rows(const std::string& text) {
  std::vector<std::vector<std::string>> rows;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind("| ", 0) != 0 || line.rfind("| ---", 0) == 0 || line.rfind("| field", 0) == 0) continue;
    std::vector<std::string> cells;
    std::size_t at = 1;
    while (at < line.size()) {
      std::size_t bar = line.find(" | ", at);
      if (bar == std::string::npos) bar = line.rfind(" |");
      if (bar == std::string::npos || bar < at) break;
      cells.push_back(line.substr(at, bar - at));
      at = bar + 2;
    }
    rows.push_back(cells);
  }
  return rows;
}

// Every `name` in backticks in `text` that is a member's name (lower case, digits, underscores).
std::set<std::string> backticked(const std::string& text) {
  static const std::regex name("`([a-z][a-z0-9_]*)`");
  std::set<std::string> names;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), name); it != std::sregex_iterator(); ++it) names.insert((*it)[1].str());
  return names;
}

// The members the first column of the section's table names.
std::set<std::string> documented_fields(const std::string& page, const std::string& title) {
  std::set<std::string> names;
  for (const auto& cells : table_rows(section(docs_page(page), title)))
    if (!cells.empty())
      for (const std::string& n : backticked(cells[0])) names.insert(n);
  return names;
}

// The second column of the row whose first column is `field`.
std::string row_meaning(const std::string& page, const std::string& title, const std::string& field) {
  for (const auto& cells : table_rows(section(docs_page(page), title)))
    if (cells.size() >= 2 && cells[0].find("`" + field + "`") != std::string::npos) return cells[1];
  return "";
}

std::set<std::string> keys(const nlohmann::json& object) {
  std::set<std::string> names;
  for (const auto& item : object.items()) names.insert(item.key());
  return names;
}

nlohmann::json dump_of(Options o, const std::string& output) {
  o.command = Command::Dump;
  o.output = output;
  o.threads = 1;
  const test::RunResult r = test::run_with(o);
  INFO(r.err);
  REQUIRE(r.code == 0);
  return nlohmann::json::parse(test::read_file(output));
}

void check_subset(const std::set<std::string>& written, const std::set<std::string>& known, const std::string& where) {
  for (const std::string& name : written) {
    INFO(where << ": member " << name << " is written but not in the readers' set (nor, then, documented)");
    CHECK(known.count(name) == 1);
  }
}

}  // namespace

TEST_CASE("dump members: docs/output-formats.md's table names exactly the members a single-layer dump can have", "[docs][dump]") {
  CHECK(documented_fields("output-formats.md", "Single-layer dumps") == record_members_written());
}

TEST_CASE("dump members: docs/models.md's table names exactly the members a model dump can have", "[docs][dump]") {
  CHECK(documented_fields("models.md", "Model dumps") == model_dump_members());
  const std::string model = row_meaning("models.md", "Model dumps", "model");
  for (const std::string& name : model_summary_members()) {
    INFO("model." << name);
    CHECK(std::regex_search(model, std::regex("\\b" + name + "\\b")));
  }
  const std::string layers = row_meaning("models.md", "Model dumps", "layers");
  for (const std::string& name : model_dump_layer_members()) {
    INFO("layers[]." << name);
    CHECK(layers.find("`" + name + "`") != std::string::npos);
  }
}

TEST_CASE("dump members: real dumps with every optional part write only members the sets (and the docs) name", "[docs][dump]") {
  test::TempDir dir;
  SECTION("one layer: --scores --outputs, with --measure norms and alti") {
    Options o;
    o.sentence = test::fixture("fa.json");
    o.scores = true;
    o.outputs = true;
    for (const char* measure : {"norms", "alti"}) {
      o.measure = measure;
      const nlohmann::json dump = dump_of(o, dir.file(std::string(measure) + ".json"));
      CHECK(dump.contains("scores_masked"));
      check_subset(keys(dump), record_members_written(), std::string("fa.json --measure ") + measure);
    }
  }
  SECTION("a whole decoder: --scores --outputs --logits --rollout --measure alti --flow --generate") {
    Options o;
    o.model = test::data_file("stories260k/stories260K.gguf");
    o.text = "Once upon a time";
    o.scores = o.outputs = o.logits = o.rollout = o.flow = true;
    o.measure = "alti";
    o.generate = 2;
    const nlohmann::json dump = dump_of(o, dir.file("model.json"));
    CHECK(dump.contains("attention_flow"));
    CHECK(dump.contains("alti_rollout"));
    check_subset(keys(dump), model_dump_members(), "model dump");
    check_subset(keys(dump["model"]), model_summary_members(), "model dump /model");
    std::set<std::string> layer_members = record_members_written();
    for (const std::string& name : model_dump_layer_members()) layer_members.insert(name);
    for (const auto& layer : dump["layers"]) check_subset(keys(layer), layer_members, "model dump /layers[]");
  }
  SECTION("a sliding-window family (gemma2): its model and layer settings") {
    Options o;
    o.model = test::test_data_file("families/gemma2-keys.gguf");
    o.token_ids = std::vector<int>{1, 2, 3, 4, 5, 6, 7, 8};
    const nlohmann::json dump = dump_of(o, dir.file("gemma2.json"));
    check_subset(keys(dump), model_dump_members(), "gemma2 dump");
    check_subset(keys(dump["model"]), model_summary_members(), "gemma2 dump /model");
    std::set<std::string> layer_members = record_members_written();
    for (const std::string& name : model_dump_layer_members()) layer_members.insert(name);
    for (const auto& layer : dump["layers"]) check_subset(keys(layer), layer_members, "gemma2 dump /layers[]");
  }
  SECTION("a translation model (CTranslate2): source and target") {
    Options o;
    o.model = test::data_file("aren-translit/model");
    o.text = "abc";
    const nlohmann::json dump = dump_of(o, dir.file("ct2.json"));
    CHECK(dump.contains("source_tokens"));
    check_subset(keys(dump), model_dump_members(), "CTranslate2 dump");
    check_subset(keys(dump["model"]), model_summary_members(), "CTranslate2 dump /model");
    std::set<std::string> layer_members = record_members_written();
    for (const std::string& name : model_dump_layer_members()) layer_members.insert(name);
    for (const auto& layer : dump["layers"]) check_subset(keys(layer), layer_members, "CTranslate2 dump /layers[]");
  }
}
