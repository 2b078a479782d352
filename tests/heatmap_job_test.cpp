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
