// The catalogue of bad inputs (tests/invalid/, one file per failure mode): each gets one exact
// message naming the file, the JSON pointer and expected vs found (issues #2 and #6).
#include "records/input_schema.hpp"

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "support/test_support.hpp"

using namespace attnviz;

namespace {

std::string invalid(const std::string& name) { return std::string(ATTNVIZ_TESTS_DIR) + "/invalid/" + name; }

std::string load_error(const InputPaths& paths) {
  try {
    load_inputs(paths);
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no InputError)";
}

struct BadInput {
  const char* file;
  const char* message;  // what follows "<path>: "
};

}  // namespace

TEST_CASE("load_inputs: every catalogue entry gets its exact message", "[io][errors]") {
  const BadInput bad = GENERATE(values<BadInput>({
      {"truncated.json", "line 1, column 49: syntax error while parsing value - unexpected end of input; expected '[', '{', or a literal"},
      {"nan_literal.json", "line 1, column 35: syntax error while parsing value - invalid literal"},
      {"infinity_literal.json", "line 1, column 35: syntax error while parsing value - invalid literal"},
      {"number_overflow.json", "line 1, column 35: number overflow parsing '1e400' (numbers must fit in float32)"},
      {"float32_overflow.json", "/embeddings/0/0: expected a finite number within float32 range (|x| <= 3.4e38), got 1e+39"},
      {"string_number.json", "/embeddings/0/0: expected a number, got a string \"1\""},
      {"ragged_rows.json", "/embeddings/1: expected 2 numbers (as in row 0; rows must all be the same length), got 3 numbers"},
      {"empty_tokens.json", "/tokens: expected at least one token, got no tokens (an empty array)"},
      {"empty_row.json", "/embeddings/0: expected a non-empty row, got an empty array"},
      {"zero_heads.json", "/num_heads: expected an integer from 1 to 4096, got 0"},
      {"heads_not_integer.json", "/num_heads: expected an integer from 1 to 4096, got the number 1.5"},
      {"heads_not_dividing.json", "/W_Q: 4 columns are not divisible by num_heads = 3 (columns = num_heads·d_k)"},
      {"kv_heads_not_dividing.json",
       "/num_kv_heads: 3 does not divide num_heads = 2 (each key/value head serves num_heads / num_kv_heads query heads)"},
      {"mask_wrong_length.json", "/attention_mask: 3 values for 2 tokens in /tokens"},
      {"mask_bad_value.json", "/attention_mask/1: expected 0 or 1 (1 = real token, 0 = padding), got the integer 2"},
      {"tokens_vs_embeddings.json", "/embeddings: 3 rows for 4 tokens in /tokens (one embedding row per token)"},
      {"weights_only.json",
       "/tokens: missing field (this looks like a weights file, not a sentence file: it has W_Q but no tokens)"},
      {"sentence_only.json",
       "/W_Q: missing field (this looks like a sentence file, not a weights file: it has tokens but no W_Q)"},
      {"invalid_utf8.json", "line 1, column 19: syntax error while parsing value - invalid string: ill-formed UTF-8 byte"},
      {"empty.json", "cannot read: the file is empty (expected a JSON object)"},
      {"duplicate_key.json", "cannot read: the key \"W_Q\" appears twice in one object (one value would be lost)"},
      {"nested_too_deep.json", "cannot read: JSON nested deeper than 64 levels (attnviz files need at most 4)"},
      {"not_an_object.json", "/: expected a JSON object, got an array of 3 items"},
      {"wrong_w_k_width.json", "/W_K: expected shape [2, 2] (d_model x num_kv_heads·d_k = 1·2), got [2, 3]"},
      {"bias_wrong_length.json", "/b_Q: expected 2 numbers (num_heads·d_k, the columns of W_Q), got 3 numbers"},
      {"w_o_wrong_rows.json", "/W_O: expected shape [2, 2] (num_heads·d_v = 1·2 x d_out), got [3, 2]"},
      {"token_not_string.json", "/tokens/1: expected a string, got the integer 7"},
      {"positions_not_integers.json",
       "/positions/1: expected an integer from -1000000000000 to 1000000000000, got the number 1.5"},
      {"positions_wrong_length.json", "/positions: expected a list of 2 integers (one per token), got an array of 1 item"},
      {"rope_unknown_style.json", "/rope/style: expected \"interleaved\" or \"half\", got a string \"spiral\""},
  }));
  const std::string path = invalid(bad.file);
  CHECK(load_error({path, "", ""}) == path + ": " + bad.message);
}

TEST_CASE("load_inputs: a source narrower than W_K's rows blames the source's embeddings (BH-08)", "[io][errors]") {
  const std::string weights = test::fixture("fb_queries.json");
  const std::string source = invalid("source_width_3.json");
  CHECK(load_error({weights, "", source}) ==
        source + ": /embeddings: 3 columns, expected 4 (the rows of /W_K in " + weights + ")");
}

TEST_CASE("load_inputs: a missing file and a folder are named", "[io][errors]") {
  const std::string missing = invalid("no_such_file.json");
  CHECK(load_error({missing, "", ""}) == missing + ": cannot read: No such file or directory");
  const std::string folder = std::string(ATTNVIZ_TESTS_DIR) + "/invalid";
  CHECK(load_error({folder, "", ""}) == folder + ": cannot read: is a directory, expected a JSON file");
}

TEST_CASE("load_inputs: a positive scale that float32 rounds to 0 says so (attack finding)", "[io][errors]") {
  test::TempDir dir;
  const std::string path = dir.file("tiny_scale.json");
  std::ofstream(path) << R"({"tokens": ["a"], "embeddings": [[1, 0]], "num_heads": 1, "W_Q": [[1, 0], [0, 1]],
                             "W_K": [[1, 0], [0, 1]], "W_V": [[1, 0], [0, 1]], "scale": 1e-46})";
  CHECK(load_error({path, "", ""}) == path + ": /scale: expected a positive number float32 can hold (at least 1.4e-45; "
                                             "this one rounds to 0), got 1e-46");
  const std::string negative = dir.file("negative_scale.json");
  std::ofstream(negative) << R"({"tokens": ["a"], "embeddings": [[1, 0]], "num_heads": 1, "W_Q": [[1, 0], [0, 1]],
                                 "W_K": [[1, 0], [0, 1]], "W_V": [[1, 0], [0, 1]], "scale": -2})";
  CHECK(load_error({negative, "", ""}) == negative + ": /scale: expected a positive number, got -2");
}

TEST_CASE("load_inputs: tokens are kept byte for byte (BH-20)", "[io]") {
  const InputBundle in = load_inputs({test::fixture("bh20.json"), "", ""});
  REQUIRE(in.queries.tokens.size() == 4);
  CHECK(in.queries.tokens[0] == "\xe2\x96\x81\xe6\x88\x91");
  CHECK(in.queries.tokens[1] == "\xc4\xa0" "cat");
  CHECK(in.queries.tokens[2] == "\xc3\xa9");
  CHECK(in.queries.tokens[3] == "\xe7\x8c\xab");
}

TEST_CASE("load_inputs: a file too large for the memory budget is refused before it is read", "[io][errors]") {
  const std::string path = test::data_file("use-lite/layer0.json");  // 4.4 MB
  CHECK_THROWS_AS(load_inputs({path, "", ""}, 1024.0 * 1024.0), LimitError);
  CHECK_NOTHROW(load_inputs({path, "", ""}, 1024.0 * 1024.0 * 1024.0));
}

// Issue 15: a cross-attention layer run without --source silently drew self-attention.
TEST_CASE("load_inputs: a weights file that declares its kind of attention is run as that kind", "[io][errors]") {
  const std::string layer = test::data_file("aren-translit/mcdonald/decoder_layer2.json");
  const std::string source = test::data_file("aren-translit/mcdonald/source.json");
  CHECK(load_error({layer, "", ""}) ==
        layer + ": /attention: \"cross\" (queries attend to the keys and values of another sentence), but no --source "
                "was given; run with --source SOURCE.json (without it the picture would be self-attention this layer "
                "never computes)");
  CHECK(load_inputs({layer, "", source}).weights.attention == "cross");
  test::TempDir dir;
  const std::string self = dir.file("self.json");
  const std::string odd = dir.file("odd.json");
  {
    std::ofstream(self) << R"({"tokens": ["a"], "embeddings": [[1]], "num_heads": 1, "W_Q": [[1]], "W_K": [[1]],
                              "W_V": [[1]], "attention": "self"})";
    std::ofstream(odd) << R"({"tokens": ["a"], "embeddings": [[1]], "num_heads": 1, "W_Q": [[1]], "W_K": [[1]],
                             "W_V": [[1]], "attention": "causal"})";
  }
  CHECK(load_error({self, "", self}) == self + ": /attention: \"self\" (the sentence attends to itself), but --source " +
                                            self + " asks for cross-attention; drop --source");
  CHECK(load_inputs({self, "", ""}).weights.attention == "self");
  CHECK(load_error({odd, "", ""}) == odd + ": /attention: expected \"self\" or \"cross\", got \"causal\"");
}

namespace {

// fa.json (a combined sentence + weights file) with `changes` merged into its root, written to
// `path`. A null in `changes` removes that member.
std::string fa_with(const std::string& path, const nlohmann::json& changes) {
  nlohmann::json root = nlohmann::json::parse(test::read_file(test::fixture("fa.json")));
  root.merge_patch(changes);
  std::ofstream(path) << root.dump();
  return path;
}

}  // namespace

// Issue 24 §2: a member attnviz does not read is named, never dropped in silence.
TEST_CASE("load_inputs: members no role reads are named in one warning per file", "[io]") {
  test::TempDir dir;
  SECTION("unknown members of a combined file") {
    const std::string path = fa_with(dir.file("extra.json"), {{"tokenz", 1}, {"dropout", 0.1}});
    const InputBundle in = load_inputs({path, "", ""});
    REQUIRE(in.warnings.size() == 1);
    CHECK(in.warnings[0] == path + ": ignoring /dropout, /tokenz: not fields of attnviz's input files "
                                   "(docs/input-files.md lists them)");
  }
  SECTION("a weights member in a file read only as a sentence file, and a sentence member in the weights file") {
    const std::string sentence = test::fixture("fa.json");
    const std::string weights = fa_with(dir.file("weights.json"), {{"tokens", nullptr}, {"embeddings", nullptr},
                                                                    {"attention_mask", {1, 1, 1}}});
    const InputBundle in = load_inputs({sentence, weights, ""});
    // One line per file (in the order of their paths, which depends on where temporary files go).
    std::vector<std::string> lines = in.warnings;
    std::sort(lines.begin(), lines.end());
    std::vector<std::string> expected{
                             weights + ": not using /attention_mask: this file is read as the weights file (the "
                                       "sentence is " + sentence + ")",
                             sentence + ": not using /W_K, /W_O, /W_Q, /W_V, /b_K, /b_O, /b_Q, /b_V, /num_heads: this "
                                        "file is read as a sentence file (the weights are " + weights + ")"};
    std::sort(expected.begin(), expected.end());
    CHECK(lines == expected);
  }
  SECTION("documented metadata and every field of the bundled examples are not warned about") {
    const std::string path = fa_with(dir.file("meta.json"), {{"licence", "MIT"}, {"reference_weights", {1}},
                                                             {"source_sentence", "x"}, {"target_output_tokens", {"a"}}});
    CHECK(load_inputs({path, "", ""}).warnings.empty());
    CHECK(load_inputs({test::data_file("use-lite/layer0.json"), "", ""}).warnings.empty());
    const InputBundle stories = load_inputs({test::data_file("stories260k/layer0.json"), "", ""});
    CHECK(stories.warnings.empty());
    // A new user drew the bundled decoder layer without --causal and saw it attend to the future.
    CHECK(stories.weights.causal == std::optional<bool>(true));
    CHECK(load_inputs({test::data_file("aren-translit/mcdonald/decoder_layer2.json"), "",
                       test::data_file("aren-translit/mcdonald/source.json")})
              .warnings.empty());
  }
}

TEST_CASE("load_inputs: a member that would change the maths but is not implemented is refused", "[io][errors]") {
  test::TempDir dir;
  const std::string path = dir.file("w.json");
  CHECK(load_error({fa_with(path, {{"is_causal", true}}), "", ""}) ==
        path + ": /is_causal: would change the attention, but attnviz reads \"causal\": true or false (refused rather "
               "than ignored)");
  CHECK(load_error({fa_with(path, {{"sliding_window", 4}}), "", ""}) ==
        path + ": /sliding_window: would change the attention, but sliding-window attention is not implemented "
               "(refused rather than ignored)");
  CHECK(load_error({fa_with(path, {{"rope", {{"style", "half"}, {"thetta", 500000}}}}), "", ""}) ==
        path + ": /rope/thetta: not a setting attnviz knows here (dim, scaling, style, theta); it would change the "
               "maths, so it is refused rather than ignored");
}

// Issue 24 §2: "causal": true in a weights file was ignored.
TEST_CASE("load_inputs: a weights file's causal is read as true or false", "[io]") {
  test::TempDir dir;
  const std::string path = dir.file("w.json");
  CHECK(load_inputs({fa_with(path, {{"causal", true}}), "", ""}).weights.causal == std::optional<bool>(true));
  CHECK(load_inputs({fa_with(path, {{"causal", false}}), "", ""}).weights.causal == std::optional<bool>(false));
  CHECK_FALSE(load_inputs({test::fixture("fa.json"), "", ""}).weights.causal.has_value());
  CHECK(load_error({fa_with(path, {{"causal", 1}}), "", ""}) == path + ": /causal: expected true or false, got the integer 1");
}

// Issue 24 §2: a rope block's linear scaling (or Hugging Face's top-level rope_scaling) ran unscaled.
TEST_CASE("load_inputs: RoPE linear scaling is read from the rope block or rope_scaling, other kinds are refused",
          "[io][rope]") {
  test::TempDir dir;
  const std::string path = dir.file("w.json");
  const nlohmann::json rope = {{"style", "interleaved"}, {"theta", 10000}};
  nlohmann::json nested = rope;
  nested["scaling"] = {{"type", "linear"}, {"factor", 4}};
  InputBundle in = load_inputs({fa_with(path, {{"rope", nested}}), "", ""});
  REQUIRE(in.weights.rope);
  CHECK(in.weights.rope->linear_factor == 4.0);
  CHECK(in.weights.rope_scaling_pointer == "/rope/scaling");
  in = load_inputs({fa_with(path, {{"rope", rope}, {"rope_scaling", {{"rope_type", "linear"}, {"factor", 2.5}}}}), "", ""});
  REQUIRE(in.weights.rope);
  CHECK(in.weights.rope->linear_factor == 2.5);
  CHECK(load_inputs({fa_with(path, {{"rope", rope}, {"rope_scaling", {{"rope_type", "default"}}}}), "", ""})
            .weights.rope->linear_factor == 1.0);
  CHECK(load_error({fa_with(path, {{"rope", rope}, {"rope_scaling", {{"type", "yarn"}, {"factor", 4}}}}), "", ""}) ==
        path + ": /rope_scaling/type: expected \"linear\" (the only RoPE scaling a weights file applies; \"yarn\" is not "
               "implemented here), got \"yarn\"");
  nested["scaling"] = {{"rope_type", "llama3"}, {"factor", 8}, {"low_freq_factor", 1}};
  CHECK(load_error({fa_with(path, {{"rope", nested}}), "", ""}) ==
        path + ": /rope/scaling/rope_type: expected \"linear\" (the only RoPE scaling a weights file applies; \"llama3\" "
               "is not implemented here), got \"llama3\"");
  nested["scaling"] = {{"type", "linear"}, {"factor", 4}};
  CHECK(load_error({fa_with(path, {{"rope", nested}, {"rope_scaling", {{"type", "linear"}, {"factor", 4}}}}), "", ""}) ==
        path + ": /rope/scaling and /rope_scaling both given: give the scaling once");
  nested["scaling"] = {{"type", "linear"}, {"factor", 0}};
  CHECK(load_error({fa_with(path, {{"rope", nested}}), "", ""}) == path + ": /rope/scaling/factor: expected a number > 0, got 0");
  nested["scaling"] = {{"type", "linear"}};
  CHECK(load_error({fa_with(path, {{"rope", nested}}), "", ""}) ==
        path + ": /rope/scaling/factor: missing field (the linear scaling factor)");
  nested["scaling"] = {{"type", "linear"}, {"factor", 2}, {"original_max_position_embeddings", 2048}};
  CHECK(load_inputs({fa_with(path, {{"rope", nested}}), "", ""}).weights.rope->linear_factor == 2.0);
  // Tester's report: the holes below ran, or refused what scales nothing.
  SECTION("a type default with a factor (or any member beside the type) is refused") {
    for (const char* key : {"type", "rope_type"}) {
      nested["scaling"] = {{key, "default"}, {"factor", 4}};
      CHECK(load_error({fa_with(path, {{"rope", nested}}), "", ""}) ==
            path + ": /rope/scaling/factor: given with /rope/scaling/" + key + " \"default\", which scales nothing (for "
                   "linear scaling write \"linear\"; otherwise drop /factor)");
    }
    CHECK(load_error({fa_with(path, {{"rope", rope}, {"rope_scaling", {{"type", "default"}, {"low_freq_factor", 1}}}}),
                      "", ""}) ==
          path + ": /rope_scaling/low_freq_factor: given with /rope_scaling/type \"default\", which scales nothing (for "
                 "linear scaling write \"linear\"; otherwise drop /low_freq_factor)");
  }
  SECTION("null scales nothing, with or without a rope block") {
    CHECK(load_inputs({fa_with(path, {{"rope_scaling", nullptr}}), "", ""}).weights.rope_scaling_pointer.empty());
    fa_with(path, nlohmann::json::object());
    nlohmann::json root = nlohmann::json::parse(test::read_file(path));
    root["rope_scaling"] = nullptr;  // merge_patch would remove it
    std::ofstream(path) << root.dump();
    const InputBundle none = load_inputs({path, "", ""});
    CHECK(none.weights.rope_scaling_pointer.empty());
    CHECK(none.weights.rope_linear_factor == 1.0);
    nested["scaling"] = nullptr;
    root["rope"] = nested;
    root.erase("rope_scaling");
    std::ofstream(path) << root.dump();
    CHECK(load_inputs({path, "", ""}).weights.rope->linear_factor == 1.0);
  }
  SECTION("factors must fit float32, be > 0 and keep positions / factor within float32") {
    const auto factor_error = [&](const nlohmann::json& f) {
      nested["scaling"] = {{"type", "linear"}, {"factor", f}};
      return load_error({fa_with(path, {{"rope", nested}}), "", ""});
    };
    const std::string prefix = path + ": /rope/scaling/factor: expected ";
    CHECK(factor_error(1e308) == prefix + "a finite number within float32 range (|x| <= 3.4e38), got 1e+308");
    CHECK(factor_error(-2) == prefix + "a number > 0, got -2");
    CHECK(factor_error(1e-30) ==
          prefix + "a factor of at least 3e-27 (positions up to 1e12 divided by it must fit float32), got 1e-30");
    CHECK(factor_error(1e-46) ==
          prefix + "a factor of at least 3e-27 (positions up to 1e12 divided by it must fit float32), got 1e-46");
    CHECK(factor_error("4") == prefix + "a number, got a string \"4\"");
    nested["scaling"] = {{"type", "linear"}, {"factor", 1e-26}};
    CHECK_THAT(load_inputs({fa_with(path, {{"rope", nested}}), "", ""}).weights.rope->linear_factor,
               Catch::Matchers::WithinRel(1e-26, 1e-6));
  }
  SECTION("original_max_position_embeddings is a positive integer") {
    for (const nlohmann::json& bad : {nlohmann::json("2048"), nlohmann::json(0), nlohmann::json(2048.5),
                                      nlohmann::json(-1)}) {
      nested["scaling"] = {{"type", "linear"}, {"factor", 2}, {"original_max_position_embeddings", bad}};
      CHECK_THAT(load_error({fa_with(path, {{"rope", nested}}), "", ""}),
                 Catch::Matchers::StartsWith(path + ": /rope/scaling/original_max_position_embeddings: expected an "
                                                    "integer from 1 to 1000000000000, got "));
    }
  }
  nested["scaling"] = {{"type", "linear"}, {"factor", 2}, {"beta_fast", 32}};
  CHECK(load_error({fa_with(path, {{"rope", nested}}), "", ""}) ==
        path + ": /rope/scaling/beta_fast: not a setting attnviz knows here (factor, original_max_position_embeddings, "
               "rope_type, type); it would change the maths, so it is refused rather than ignored");
}

// Tester's report: a sentence and a weights file naming different layers or models ran, the
// title taking the weights file's; a later error blamed the wrong file.
TEST_CASE("load_inputs: the sentence and weights files must not disagree on model or layer", "[io][errors]") {
  test::TempDir dir;
  const std::string s = dir.file("s.json");
  const std::string w = dir.file("w.json");
  fa_with(s, {{"model", "m"}, {"layer", 2}});
  SECTION("a different layer names both files and values") {
    CHECK(load_error({s, fa_with(w, {{"model", "m"}, {"layer", 3}}), ""}) ==
          w + ": /layer 3 disagrees with /layer 2 in the sentence file " + s +
              " (the embeddings were taken for another layer)");
  }
  SECTION("a different model names both files and values") {
    CHECK(load_error({s, fa_with(w, {{"model", "other"}, {"layer", 2}}), ""}) ==
          w + ": /model \"other\" disagrees with /model \"m\" in the sentence file " + s +
              " (embeddings and weights of different models?)");
  }
  SECTION("checked before the shapes, whose error would blame the sentence's embeddings") {
    fa_with(s, {{"model", "m"}, {"layer", 2}, {"embeddings", {{1.0}, {2.0}, {3.0}}}, {"tokens", {"a", "b", "c"}}});
    CHECK(load_error({s, fa_with(w, {{"model", "m"}, {"layer", 3}}), ""}) ==
          w + ": /layer 3 disagrees with /layer 2 in the sentence file " + s +
              " (the embeddings were taken for another layer)");
  }
  SECTION("the same values, or a value in one file only, are fine") {
    CHECK(load_inputs({s, fa_with(w, {{"model", "m"}, {"layer", 2}}), ""}).weights.layer_index == std::optional<int>(2));
    CHECK(load_inputs({s, fa_with(w, {{"model", nullptr}, {"layer", nullptr}}), ""}).queries.layer ==
          std::optional<int>(2));
    CHECK(load_inputs({fa_with(s, {{"model", nullptr}, {"layer", nullptr}}), fa_with(w, {{"model", "x"}, {"layer", 7}}),
                       ""})
              .weights.layer_index == std::optional<int>(7));
  }
}

// A new user ran the PyTorch exporter's cross-attention demo without --source and was told
// "/embeddings: 16 columns, expected 12": the declared kind is checked before the shapes.
TEST_CASE("load_inputs: a cross-attention weights file without --source says so before any shape", "[io][errors]") {
  test::TempDir dir;
  const std::string sentence = dir.file("sentence.json"), weights = dir.file("weights.json");
  std::ofstream(sentence) << R"({"tokens": ["a", "b"], "embeddings": [[1, 0], [0, 1]]})";
  std::ofstream(weights) << R"({"num_heads": 1, "attention": "cross", "W_Q": [[1, 0], [0, 1]],
                                "W_K": [[1, 0], [0, 1], [1, 1]], "W_V": [[1, 0], [0, 1], [1, 1]]})";
  CHECK_THROWS_WITH(load_inputs({sentence, weights, ""}),
                    weights + ": /attention: \"cross\" (queries attend to the keys and values of another sentence), but no "
                              "--source was given; run with --source SOURCE.json (without it the picture would be "
                              "self-attention this layer never computes)");
}
