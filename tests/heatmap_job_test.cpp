// The pictures' figure titles (issue 15: a record with no model name was titled
// "attention · self-attention weights").
#include <catch2/catch.hpp>

#include "cli/heatmap_job.hpp"

using namespace attnviz;

TEST_CASE("heatmap_job: the figure title names what is known and nothing in its place", "[cli][render]") {
  AttentionRecord record;
  CHECK(heatmap_figure_title(record) == "self-attention weights");
  record.layer = 2;
  record.mode = "cross";
  CHECK(heatmap_figure_title(record) == "layer 2 · cross-attention weights");
  record.model = "aren-translit decoder";
  record.mode = "self";
  record.causal = true;
  record.key_mask = {1, 0};
  CHECK(heatmap_figure_title(record) == "aren-translit decoder · layer 2 · self-attention weights · causal mask · "
                                        "padding mask");
}

// Issue 24 §4: an encoder-decoder's encoder and decoder self-attention pictures carried the same
// title and panel names ("L3H0"); they name their block as the census and compare do.
TEST_CASE("heatmap_job: an encoder-decoder's pictures name their block in titles and head names", "[cli][render]") {
  AttentionRecord record;
  record.model = "aren-translit";
  record.layer = 3;
  record.num_heads = 2;
  record.query_tokens = record.key_tokens = {"a", "b"};
  record.weights = {Matrix::Constant(2, 2, 0.5f), Matrix::Constant(2, 2, 0.5f)};
  CHECK(heatmap_figure_title(record, "enc") == "aren-translit · layer 3 · encoder self-attention weights");
  record.causal = true;
  CHECK(heatmap_figure_title(record, "dec") == "aren-translit · layer 3 · decoder self-attention weights · causal mask");
  record.causal = false;
  record.mode = "cross";
  CHECK(heatmap_figure_title(record, "cross") == "aren-translit · layer 3 · decoder cross-attention weights");
  CHECK(heatmap_figure_title(record) == "aren-translit · layer 3 · cross-attention weights");
  Options options;
  const ReportView view = heatmap_report_view(record, options, "decoder/layer_3/cross", 8e9, "cross");
  CHECK(view.panel_titles == std::vector<std::string>{"cross.L3H0 · head 0 of 2", "cross.L3H1 · head 1 of 2"});
  CHECK(view.panel_names == std::vector<std::string>{"cross.L3H0", "cross.L3H1"});
  CHECK(heatmap_report_view(record, options, "layer_3", 8e9).panel_names == std::vector<std::string>{"L3H0", "L3H1"});
}

// Issue 24 §2: the RoPE scaling that was applied is shown, as the dump records it.
TEST_CASE("heatmap_job: the figure title names RoPE and its linear scaling", "[cli][render]") {
  AttentionRecord record;
  record.rope = RopeSettings{};
  CHECK(heatmap_figure_title(record) == "self-attention weights · RoPE (interleaved)");
  record.rope->linear_factor = 2.5;
  CHECK(heatmap_figure_title(record) == "self-attention weights · RoPE (interleaved, linear scaling ×2.5)");
}

// Issue 23 (llama-cpp-python #1141): --rows generated draws only the generated tokens' rows,
// P … P+N−1, each over every key; without generated rows it is refused naming --rows.
TEST_CASE("heatmap_job: --rows generated keeps the rows from the prompt's end on", "[cli][render]") {
  AttentionRecord record;
  record.layer = 0;
  record.num_heads = 1;
  record.causal = true;
  record.query_tokens = record.key_tokens = {"<s>", "a", "b", "c", "d"};
  Matrix w = Matrix::Zero(5, 5);
  for (int i = 0; i < 5; ++i) w.row(i).head(i + 1).setConstant(1.0f / static_cast<float>(i + 1));
  record.weights = {w};
  record.prompt_length = 3;
  Options options;
  options.rows = "generated";
  const ReportView view = heatmap_report_view(record, options, "layer_0", 8e9);
  CHECK(view.query_tokens == Tokens{"c", "d"});
  CHECK(view.key_tokens.size() == 5);
  REQUIRE(view.values.size() == 4 + 5);  // rows 3 and 4 of the causal matrix: 4 and 5 allowed keys
  CHECK(view.values.front() == 0.25f);
  CHECK(view.values.back() == 0.2f);
  options.rows = "all";
  CHECK(heatmap_report_view(record, options, "layer_0", 8e9).query_tokens.size() == 5);
  record.prompt_length = 0;
  options.rows = "generated";
  CHECK_THROWS_WITH(heatmap_report_view(record, options, "layer_0", 8e9),
                    Catch::Contains("--rows") && Catch::Contains("layer 0 has no generated tokens"));
}
