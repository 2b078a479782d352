// cli/attribute_job: `attnviz attribute` in process (issue 20 §3): the files it writes, the
// target as text (tokenized exactly as written) or id, and every bad input refused in one line,
// exit 1, nothing written.
#include <filesystem>
#include <nlohmann/json.hpp>

#include "cli/run.hpp"
#include "render/heatmap.hpp"
#include "support/run_support.hpp"
#include "support/test_support.hpp"

using namespace attnviz;
using attnviz::test::data_file;
using attnviz::test::run_with;
using attnviz::test::TempDir;
using Catch::Matchers::Contains;
using Catch::Matchers::WithinAbs;

namespace {

Options attribute_options(const std::string& output) {
  Options o;
  o.command = Command::Attribute;
  o.model = data_file("stories260k/stories260K.gguf");
  o.text = "Once upon a time";
  o.output = output;
  return o;
}

nlohmann::json attribution(const TempDir& dir) {
  return nlohmann::json::parse(attnviz::test::read_file(dir.file("out/attribution.json")));
}

}  // namespace

TEST_CASE("attribute: writes attribution.json and attribution.png, whose shares add up to the logit", "[attribute][cli]") {
  TempDir dir;
  const attnviz::test::RunResult r = run_with(attribute_options(dir.file("out")));
  INFO(r.err);
  REQUIRE(r.code == kExitOk);
  CHECK_THAT(r.out, Contains("wrote attribution.json and attribution.png to ") &&
                        Contains("target \",\" (id 432) at position 4 \"\xE2\x96\x81time\""));
  const nlohmann::json a = attribution(dir);
  CHECK(a["format"] == "attnviz.attribution");
  CHECK(a["position"] == 4);
  CHECK(a["target_id"] == 432);
  CHECK(a["target_token"] == ",");
  CHECK(a["dla"].size() == 5);
  CHECK(a["dla"][0].size() == 8);
  CHECK(a["ablation"].size() == 5);
  CHECK(!a.contains("dla_position"));
  double total = a["dla_embedding"].get<double>() + a["dla_final_norm_bias"].get<double>();
  for (const char* field : {"dla_mlp", "dla_attn_bias", "dla_mlp_bias"})
    for (const auto& v : a[field]) total += v.get<double>();
  for (const auto& layer : a["dla"])
    for (const auto& v : layer) total += v.get<double>();
  CHECK_THAT(total, WithinAbs(a["logit"].get<double>(), 1e-4));
  const auto [width, height] = attnviz::test::png_size(dir.file("out/attribution.png"));
  CHECK(width > 300);
  CHECK(height > width / 2);  // two maps, one above the other
}

TEST_CASE("attribute: --format svg,html writes attribution.svg and attribution's own page beside the JSON", "[attribute][cli]") {
  TempDir dir;
  Options o = attribute_options(dir.file("out"));
  o.formats = {"svg", "html"};
  const attnviz::test::RunResult r = run_with(o);
  REQUIRE(r.code == kExitOk);
  CHECK(std::filesystem::exists(dir.file("out/attribution.svg")));
  CHECK(!std::filesystem::exists(dir.file("out/attribution.png")));
  CHECK_THAT(r.out, Contains("wrote attribution.json, attribution.svg and attribution.html to "));
  // Its own page, not the attention report (issue 34 §3: that drew "attention lines" from
  // layers to heads and read its layer labels as a text, L0L1L2L3L4): one title, one cell per
  // (layer, head) of each map (stories260K: 5 layers of 8 heads), and the top heads.
  const std::string page = attnviz::test::read_file(dir.file("out/attribution.html"));
  std::size_t cells = 0;
  for (std::size_t at = page.find("<td class=\"v\""); at != std::string::npos; at = page.find("<td class=\"v\"", at + 1)) ++cells;
  CHECK(cells == 2 * 5 * 8);
  std::size_t titles = 0;
  for (std::size_t at = page.find("<h1>"); at != std::string::npos; at = page.find("<h1>", at + 1)) ++titles;
  CHECK(titles == 1);
  CHECK_THAT(page, Contains("<li>top direct logit attribution: L"));
  CHECK_THAT(page, Contains("<li>largest drop in log p when ablated: L"));
  CHECK_THAT(page, !Contains("head-lines") && !Contains("attnviz-data"));
}

TEST_CASE("attribute: --target is tokenized exactly as written, --target-id and --position pick the logit", "[attribute][cli]") {
  TempDir dir;
  Options o = attribute_options(dir.file("out"));
  o.text = "Once upon a time, there was a little girl named Lily";
  SECTION("\" He\" with its space is one token") {
    o.target = " He";
    REQUIRE(run_with(o).code == kExitOk);
    CHECK(attribution(dir)["target_token"] == "\xE2\x96\x81He");
  }
  SECTION("--target-id and --position") {
    o.target_id = 261;
    o.position = 2;
    REQUIRE(run_with(o).code == kExitOk);
    const nlohmann::json a = attribution(dir);
    CHECK(a["target_id"] == 261);
    CHECK(a["position"] == 2);
    CHECK(a["position_token"] == "\xE2\x96\x81upon");
  }
}

TEST_CASE("attribute: bad input is one line, exit 1, nothing written", "[attribute][cli][errors]") {
  TempDir dir;
  Options o = attribute_options(dir.file("out"));
  std::string expected;
  SECTION("--target text of several tokens says how it splits and suggests --target-id") {
    o.target = " upon a";
    expected = "--target: \" upon a\" is 2 tokens, not one: \"\xE2\x96\x81upon\" (407), \"\xE2\x96\x81" "a\" (261)";
    CHECK_THAT(run_with(o).err, Contains("--target-id 407"));
  }
  SECTION("--target text that gives no token") {
    o.target = "";
    expected = "--target: \"\" gives no token";
  }
  SECTION("--target-id outside the vocabulary") {
    o.target_id = 512;
    expected = "--target-id: 512 is outside the vocabulary of 512 tokens (0-511)";
  }
  SECTION("--position past the text") {
    o.position = 5;
    expected = "--position: 5 is past the text: its 5 tokens are positions 0-4 (BOS at 0)";
  }
  SECTION("a negative --position") {
    o.position = -1;
    expected = "--position: -1 is not a position";
  }
  SECTION("--target and --target-id together") {
    o.target = ",";
    o.target_id = 432;
    expected = "--target: give --target or --target-id, not both";
  }
  SECTION("an encoder-decoder's --target that is not one target vocabulary entry") {
    o.model = data_file("aren-translit/model");
    o.text = "\xD9\x85\xD8\xA7";  // "ما"
    o.target = "ab";
    expected = "--target: \"ab\" is not a token of the target vocabulary " + data_file("aren-translit/model/target_vocabulary.txt");
  }
  SECTION("an encoder-decoder's --position past the decoder's input") {
    o.model = data_file("aren-translit/model");
    o.text = "\xD9\x85\xD8\xA7";  // "ما": greedy decoding gives <s> and at most a few characters
    o.target_tokens = "m a";
    o.position = 3;
    expected = "--position: 3 is past the text: the decoder's 3 tokens are positions 0-2 (<s> at 0)";
  }
  SECTION("--target-tokens on a decoder-only model") {
    o.target_tokens = "a b";
    expected = "--target-tokens: is for encoder-decoder (CTranslate2) models; " + o.model + " is a decoder-only model";
  }
  const attnviz::test::RunResult r = run_with(o);
  CHECK(r.code == kExitInputError);
  CHECK_THAT(r.err, Contains("attnviz: error: " + expected));
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  CHECK(!std::filesystem::exists(dir.file("out")));
}

TEST_CASE("attribute: an encoder-decoder attributes the decoder's next token over self- and cross-attention heads", "[attribute][cli]") {
  TempDir dir;
  Options o = attribute_options(dir.file("out"));
  o.model = data_file("aren-translit/model");
  o.text.reset();
  o.source_tokens = "\xD9\x85 \xD8\xA7 \xD9\x83";  // م ا ك
  o.target_tokens = "m a c";
  o.position = 2;
  const attnviz::test::RunResult r = run_with(o);
  INFO(r.err);
  REQUIRE(r.code == kExitOk);
  const nlohmann::json a = attribution(dir);
  CHECK(a["position_token"] == "a");
  CHECK(a["tokens"].size() == 4);
  CHECK(a["source_tokens"].size() == 3);
  const auto sum = [](const nlohmann::json& table) {
    double s = 0;
    for (const auto& row : table) for (const double v : row) s += v;
    return s;
  };
  double total = sum(a["dla"]) + sum(a["dla_cross"]) + a["dla_embedding"].get<double>() + a["dla_position"].get<double>() +
                 a["dla_final_norm_bias"].get<double>() + a["dla_output_bias"].get<double>();
  for (const char* field : {"dla_mlp", "dla_attn_bias", "dla_cross_bias", "dla_mlp_bias"})
    for (const double v : a[field]) total += v;
  CHECK_THAT(total, WithinAbs(a["logit"].get<double>(), 1e-4));
  for (const char* field : {"ablation", "ablation_cross", "ablation_encoder"}) {
    INFO(field);
    CHECK(a[field].size() == 6);
    CHECK(a[field][0].size() == 8);
    CHECK(std::abs(sum(a[field])) > 0);
  }
  CHECK_THAT(r.out, Contains("top direct logit attribution: ") && Contains("largest drop in log p when ablated: "));
  CHECK((r.out.find("dec.L") != std::string::npos || r.out.find("cross.L") != std::string::npos));
}

TEST_CASE("attribute: the maps print three significant digits in their cells (a tiny effect is not 0.00)", "[attribute][cli]") {
  TempDir dir;
  Options o = attribute_options(dir.file("out"));
  o.model = data_file("aren-translit/model");
  o.text = "\xD9\x85\xD8\xA7\xD9\x83";  // "ماك"
  o.formats = {"svg"};
  REQUIRE(run_with(o).code == kExitOk);
  const nlohmann::json a = attribution(dir);
  const std::string svg = attnviz::test::read_file(dir.file("out/attribution.svg"));
  // Every ablation effect is printed as cell_value_text's significant form, tiny ones included.
  int tiny = 0;
  for (const char* field : {"ablation", "ablation_cross", "ablation_encoder"})
    for (const auto& row : a[field])
      for (const double v : row) {
        INFO(field << " " << v);
        CHECK_THAT(svg, Contains(">" + cell_value_text(v, true) + "<"));
        tiny += std::abs(v) < 5e-3;
      }
  CHECK(tiny > 0);
}
