// The attention JSON format: dumps round-trip exactly, and files from other tools are
// validated before anything is drawn (BH-14, BH-17).
#include "records/record_json.hpp"

#include <cmath>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>

#include "cli/attention_job.hpp"
#include "core/error.hpp"
#include "support/test_support.hpp"

using namespace attnviz;
using attnviz::test::fixture;

namespace {

AttentionRecord fa_record(bool with_extras) {
  Options options;
  options.sentence = fixture("fa.json");
  options.scores = with_extras;
  options.outputs = with_extras;
  std::vector<std::string> warnings;
  return compute_record(options, warnings);
}

std::string read_error(const std::string& path) {
  try {
    std::vector<std::string> warnings;
    read_record(path, 0, warnings);
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no InputError)";
}

}  // namespace

TEST_CASE("record_json: a dump reads back with bit-identical weights", "[io]") {
  const AttentionRecord record = fa_record(false);
  test::TempDir dir;
  const std::string path = dir.file("fa_dump.json");
  {
    std::ofstream out(path);
    out << record_to_json(record);
  }
  std::vector<std::string> warnings;
  const AttentionRecord back = read_record(path, 0, warnings);
  CHECK(warnings.empty());
  REQUIRE(back.num_heads == 2);
  CHECK(back.query_tokens == record.query_tokens);
  CHECK(back.key_tokens == record.key_tokens);
  for (int h = 0; h < 2; ++h) test::check_matrix_near(back.weights[h], record.weights[h], 0.0);
}

TEST_CASE("record_json: the dump states shapes, scale, axes and masks (BH-03, BH-16, BH-19)", "[io]") {
  const nlohmann::json dump = nlohmann::json::parse(record_to_json(fa_record(true)));
  CHECK(dump["mode"] == "self");
  CHECK(dump["num_heads"] == 2);
  CHECK(dump["d_k"] == 2);
  // Written as the shortest decimal that reads back as the same float32.
  CHECK(static_cast<float>(dump["scale"].get<double>()) == static_cast<float>(1.0 / std::sqrt(2.0)));
  CHECK(dump["rows"] == "query");
  CHECK(dump["cols"] == "key");
  CHECK(dump["vmin"] == 0);
  CHECK(dump["vmax"] == 1);
  CHECK(dump["causal"] == false);
  REQUIRE(dump["weights"].size() == 2);
  CHECK_THAT(dump["weights"][0][0][2].get<double>(), Catch::Matchers::WithinAbs(0.14520318, 1e-7));
  CHECK_THAT(dump["scores"][0][0][1].get<double>(), Catch::Matchers::WithinAbs(5.30330086, 1e-5));
  CHECK_THAT(dump["output"][0][0].get<double>(), Catch::Matchers::WithinAbs(-0.83097807, 1e-6));
}

TEST_CASE("record_json: masked scores are null and weights of a fully masked row are 0 (BH-01)", "[io]") {
  Options options;
  options.sentence = fixture("bh01.json");
  options.causal = true;
  options.scores = true;
  std::vector<std::string> warnings;
  const nlohmann::json dump = nlohmann::json::parse(record_to_json(compute_record(options, warnings)));
  CHECK(dump["scores"][0][0][0].is_null());
  CHECK(dump["scores"][0][1][2].is_null());
  CHECK(dump["weights"][0][0] == nlohmann::json({0, 0, 0}));
  CHECK(dump["fully_masked_rows"] == nlohmann::json::parse(R"([{"query":0,"token":"<pad>"}])"));
  REQUIRE(warnings.size() == 1);
  CHECK(warnings[0] == "query 0 \"<pad>\": every key is masked (causal/padding), so its weights are all zero in every "
                       "head (H0)");
}

TEST_CASE("record_json: rows that are not distributions are refused, naming head, row and sum (BH-14)", "[io][errors]") {
  const std::string over = fixture("bh14_not_distribution.json");
  CHECK(read_error(over) == over + ": /weights/0/0/0: expected an attention weight in [0, 1] (head 0), got 1.111111");
  const std::string negative = fixture("bh14_negative.json");
  CHECK(read_error(negative) == negative + ": /weights/0/0/0: expected an attention weight in [0, 1] (head 0), got 1.100000");
}

TEST_CASE("record_json: token lists must match the matrices, no batch axis (BH-17)", "[io][errors]") {
  const std::string swapped = fixture("bh17_swapped_tokens.json");
  CHECK(read_error(swapped) ==
        swapped + ": /weights/0: expected shape [4, 2] (4 query tokens x 2 key tokens), got [2, 4]");
  const std::string batch = fixture("bh17_batch.json");
  CHECK(read_error(batch) == batch + ": /weights: expected [head][query][key] (one sentence per file), got 4 nested "
                                     "levels: batch 2");
}

TEST_CASE("record_json: tokens and query_tokens that disagree are refused, not guessed between", "[io][errors]") {
  const std::string path = fixture("tokens_disagree.json");
  CHECK(read_error(path) == path + ": /query_tokens and /tokens differ: give one list of labels per axis");
}

// Issue 15: 2-D weights (one head written without its axis) were reported as "/weights/0/0:
// expected a row … got the number 0.5".
TEST_CASE("record_json: weights without the head axis are named as such", "[io][errors]") {
  const std::string path = fixture("weights_without_head_axis.json");
  CHECK(read_error(path) == path + ": /weights: expected [head][query][key] (3 nested levels), got 2 nested levels "
                                   "[query][key]: the head axis is missing (one head is [[[w, ...], ...]], a list "
                                   "holding one matrix)");
}

TEST_CASE("record_json: a declared head count is counted in words that agree with it", "[io][errors]") {
  const std::string one = fixture("two_heads_declared_one.json");
  CHECK(read_error(one) == one + ": /num_heads: 1 head declared, but /weights holds 2");
  const std::string two = fixture("one_head_declared_two.json");
  CHECK(read_error(two) == two + ": /num_heads: 2 heads declared, but /weights holds 1");
}

TEST_CASE("record_json: the longest float32 texts, in every cell, and masked scores, are written whole "
          "(issue 11: numbers go through a pointer into room made per matrix)", "[io]") {
  AttentionRecord record = fa_record(true);
  // 15 characters each, the most a shortest-round-trip float32 takes (checked over all 2^32
  // floats with std::to_chars), in every score cell.
  const float longest[] = {-1.00211145e-36f, -1.00282165e-36f, -1.00353185e-36f, -1.00424205e-36f};
  for (Matrix& scores : record.scores) {
    for (Eigen::Index i = 0; i < scores.size(); ++i) scores.data()[i] = longest[i % 4];
    scores(0, 1) = -std::numeric_limits<float>::infinity();
  }
  const std::string text = record_to_json(record);
  const nlohmann::json dump = nlohmann::json::parse(text);
  const nlohmann::json& first = dump["scores"][0];
  for (std::size_t r = 0; r < first.size(); ++r) {
    for (std::size_t c = 0; c < first[r].size(); ++c) {
      CAPTURE(r, c);
      if (r == 0 && c == 1) {
        CHECK(first[r][c].is_null());
      } else {
        CHECK(static_cast<float>(first[r][c].get<double>()) == record.scores[0](r, c));
      }
    }
  }
  CHECK(text.find("-1.00282165e-36") != std::string::npos);

  // The append form: the same text, with the prefix right after the opening brace.
  std::string appended = "before";
  append_record_json(record, "\"stack\": \"decoder\",", appended);
  CHECK(appended == "before{\"stack\": \"decoder\"," + text.substr(1, text.size() - 2));
}

// Issue 24 §2: the dump records the RoPE scaling that was applied, and reads it back.
TEST_CASE("record_json: a linear RoPE scaling is written under rope and read back", "[io][rope]") {
  AttentionRecord record = fa_record(false);
  record.rope = RopeSettings{};
  record.rope->dim = 2;
  const nlohmann::json unscaled = nlohmann::json::parse(record_to_json(record));
  CHECK_FALSE(unscaled["rope"].contains("scaling"));  // dumps of unscaled RoPE read as before
  record.rope->linear_factor = 4;
  const std::string text = record_to_json(record);
  CHECK(nlohmann::json::parse(text)["rope"]["scaling"] == nlohmann::json({{"type", "linear"}, {"factor", 4.0}}));
  test::TempDir dir;
  const std::string path = dir.file("scaled.json");
  std::ofstream(path) << text;
  std::vector<std::string> warnings;
  const AttentionRecord back = read_record(path, 0, warnings);
  REQUIRE(back.rope);
  CHECK(back.rope->linear_factor == 4.0);
  CHECK(warnings.empty());
}

// Issue 24 §2: a member of a dump that attnviz does not read is named, not dropped in silence.
TEST_CASE("record_json: members that are not dump fields are named in a warning", "[io]") {
  nlohmann::json dump = nlohmann::json::parse(record_to_json(fa_record(false)));
  dump["attention_temperature"] = 2;
  dump["heads_note"] = "x";
  dump["rope"] = {{"style", "half"}, {"theta", 10000}, {"dim", 2}, {"partial", true}};
  test::TempDir dir;
  const std::string path = dir.file("extra.json");
  std::ofstream(path) << dump.dump();
  std::vector<std::string> warnings;
  const AttentionRecord back = read_record(path, 0, warnings);
  CHECK(back.num_heads == 2);
  REQUIRE(warnings.size() == 2);
  CHECK(warnings[0] == path + ": ignoring /attention_temperature, /heads_note: not fields of an attention dump "
                              "(docs/output-formats.md)");
  CHECK(warnings[1] == path + ": ignoring /rope/partial: not a field of a dump's rope (what was applied)");
}

// Tester's report: render and compare took a dump's wrong-typed or impossible header values in
// silence (and showed them in titles). Each is refused naming the file and the JSON pointer.
TEST_CASE("record_json: every header member read or shown is type-checked and validated", "[io][errors]") {
  nlohmann::json rope = {{"style", "half"}, {"theta", 10000}, {"dim", 2}};
  nlohmann::json yarn = rope, negative = rope, theta_text = rope;
  yarn["scaling"] = {{"type", "yarn"}, {"factor", 4}};
  negative["scaling"] = {{"type", "linear"}, {"factor", -2}};
  theta_text["theta"] = "abc";
  const auto [member, value, message] = GENERATE_COPY(table<std::string, nlohmann::json, std::string>({
      {"rope", yarn, "/rope/scaling/type: expected \"linear\" (the only scaling a layer run applies), got a string \"yarn\""},
      {"rope", negative, "/rope/scaling/factor: expected a number > 0, got -2"},
      {"rope", theta_text, "/rope/theta: expected a number, got a string \"abc\""},
      {"rope", "half", "/rope: expected an object {style, theta, dim} or null, got a string \"half\""},
      {"mode", 5, "/mode: expected a string, got the integer 5"},
      {"mode", "both", "/mode: expected \"self\" or \"cross\", got \"both\""},
      {"model", 7, "/model: expected a string (the model's name) or null, got the integer 7"},
      {"scale", nlohmann::json::array({1}), "/scale: expected a number, got an array of 1 item"},
      {"scale", -1, "/scale: expected a number > 0 (or 0: unknown), got -1"},
      {"version", 2, "/version: expected 1 (the version this attnviz reads), got the integer 2"},
      {"format", "attnviz.attentionX", "/format: expected \"attnviz.attention\", got a string \"attnviz.attentionX\""},
  }));
  nlohmann::json dump = nlohmann::json::parse(record_to_json(fa_record(false)));
  dump[member] = value;
  test::TempDir dir;
  const std::string path = dir.file("bad.json");
  std::ofstream(path) << dump.dump();
  CHECK(read_error(path) == path + ": " + message);
}

TEST_CASE("record_json: a member of a dump's rope scaling that is not written there is named", "[io]") {
  nlohmann::json dump = nlohmann::json::parse(record_to_json(fa_record(false)));
  dump["rope"] = {{"style", "half"}, {"theta", 10000}, {"dim", 2}, {"scaling", {{"type", "linear"}, {"factor", 2}, {"foo", 1}}}};
  test::TempDir dir;
  const std::string path = dir.file("extra.json");
  std::ofstream(path) << dump.dump();
  std::vector<std::string> warnings;
  CHECK(read_record(path, 0, warnings).rope->linear_factor == 2.0);
  CHECK(warnings == std::vector<std::string>{path + ": ignoring /rope/scaling/foo: not a field of a dump's RoPE scaling "
                                                    "(what was applied)"});
}
