// The head census (issue 13): every statistic of one head on hand values, and the CSV layout.
#include "census/head_census.hpp"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "model/ct2_model.hpp"
#include "render/color_scale.hpp"
#include "render/colormap.hpp"
#include "render/head_census_picture.hpp"
#include "support/test_support.hpp"

using namespace attnviz;
using Catch::Matchers::WithinAbs;
using attnviz::test::matrix;

namespace {

// "a b a", causal: row 0 on itself, row 1 0.4/0.6, row 2 0.2/0.3/0.5.
AttentionBlock hand_block() {
  AttentionBlock block;
  block.layer = 2;
  block.record.layer = 2;
  block.record.causal = true;
  block.record.query_tokens = block.record.key_tokens = {"a", "b", "a"};
  block.record.num_heads = 1;
  block.record.weights = {matrix({{1, 0, 0}, {0.4, 0.6, 0}, {0.2, 0.3, 0.5}})};
  return block;
}

// One block of a toy encoder-decoder, two heads: encoder self over "x y x", decoder self
// (causal) over "<s> a b", cross from "<s> a b" to "x y x".
AttentionBlock toy_block(const std::string& stack, const std::string& kind, int layer) {
  AttentionBlock block;
  block.layer = layer;
  block.stack = stack;
  block.kind = kind;
  block.encoder_decoder = true;
  AttentionRecord& r = block.record;
  r.layer = layer;
  r.mode = kind;
  r.causal = stack == "decoder" && kind == "self";
  r.query_tokens = stack == "encoder" ? Tokens{"x", "y", "x"} : Tokens{"<s>", "a", "b"};
  r.key_tokens = stack == "decoder" && kind == "self" ? Tokens{"<s>", "a", "b"} : Tokens{"x", "y", "x"};
  r.num_heads = 2;
  const double s = 0.1 * (layer + 1);  // every block and layer its own values
  if (r.causal) {
    r.weights = {matrix({{1, 0, 0}, {s, 1 - s, 0}, {s, s, 1 - 2 * s}}), matrix({{1, 0, 0}, {1 - s, s, 0}, {0.5, 0.5, 0}})};
  } else {
    r.weights = {matrix({{1 - 2 * s, s, s}, {s, 1 - 2 * s, s}, {s, s, 1 - 2 * s}}),
                 matrix({{0.5, 0.5, 0}, {0, 0.5, 0.5}, {1 - s, 0, s}})};
  }
  return block;
}

// The model's order: every encoder layer, then per decoder layer self and cross.
CensusCollector toy_census(int layers) {
  CensusCollector census;
  for (int l = 0; l < layers; ++l) census.add(toy_block("encoder", "self", l));
  for (int l = 0; l < layers; ++l) {
    census.add(toy_block("decoder", "self", l));
    census.add(toy_block("decoder", "cross", l));
  }
  return census;
}

// A pixel of cell (row, col) away from its printed value: 2 px inside its top-left corner.
Rgb cell_corner(const RenderedGrid& grid, int panel, int row, int col) {
  const Point centre = cell_centre_px(grid.layout, panel, row, col);
  const int inset = grid.layout.cell_px / 2 - 2;
  return grid.image.at(centre.x_px - inset, centre.y_px - inset);
}

bool mentions_masking(const std::vector<std::string>& lines) {
  return std::any_of(lines.begin(), lines.end(),
                     [](const std::string& line) { return line.find("masked") != std::string::npos; });
}

}  // namespace

TEST_CASE("census: every statistic of a head on hand values", "[census]") {
  const std::vector<CensusRow> rows = census_of_block(hand_block());
  REQUIRE(rows.size() == 1);
  const CensusRow& r = rows.front();
  CHECK(r.layer == 2);
  CHECK(r.head == 0);
  const double h1 = -(0.4 * std::log(0.4) + 0.6 * std::log(0.6));                      // 0.673012
  const double h2 = -(0.2 * std::log(0.2) + 0.3 * std::log(0.3) + 0.5 * std::log(0.5));  // 1.029653
  CHECK_THAT(r.stats.entropy_mean, WithinAbs((0 + h1 + h2) / 3, 1e-6));
  CHECK_THAT(r.stats.entropy_min, WithinAbs(0, 1e-12));
  CHECK_THAT(r.stats.entropy_max, WithinAbs(h2, 1e-6));
  // Row 0 sees one key: H/ln k = 0/0 carries nothing and is left out of the mean.
  CHECK_THAT(*r.stats.entropy_normalised_mean, WithinAbs((h1 / std::log(2.0) + h2 / std::log(3.0)) / 2, 1e-6));
  CHECK_THAT(r.stats.max_weight_mean, WithinAbs((1 + 0.6 + 0.5) / 3, 1e-6));
  CHECK_THAT(*r.stats.mean_distance, WithinAbs((0 + 0.4 * 1 + (0.2 * 2 + 0.3 * 1)) / 3, 1e-6));
  CHECK_THAT(*r.stats.diagonal_mass, WithinAbs((1 + 0.6 + 0.5) / 3, 1e-6));
  CHECK_THAT(*r.stats.previous_mass, WithinAbs((0.4 + 0.3) / 2, 1e-6));
  CHECK_THAT(*r.stats.first_token_mass, WithinAbs((1 + 0.4 + 0.2) / 3, 1e-6));
  // Query 2 ("a") had "a" at 0, followed by key 1: weight 0.3; no other row repeats.
  CHECK_THAT(*r.induction, WithinAbs(0.3, 1e-6));
}

TEST_CASE("census: CSV has layer, head, the --stats names and the induction score", "[census]") {
  std::vector<CensusRow> rows = census_of_block(hand_block());
  const std::string csv = census_to_csv(rows);
  CHECK(csv.substr(0, csv.find('\n')) ==
        "layer,head,entropy_mean,entropy_min,entropy_max,entropy_normalised_mean,max_weight_mean,mean_distance,"
        "diagonal_mass,previous_token_mass,first_token_mass,induction_score");
  CHECK(csv.find("\n2,0,0.567555,0,1.02965,") != std::string::npos);
  const std::string tail = ",0.35,0.533333,0.3\n";
  CHECK(csv.substr(csv.size() - tail.size()) == tail);
  rows.front().induction.reset();
  CHECK(census_to_csv(rows).substr(census_to_csv(rows).size() - 2) == ",\n");
  CHECK(census_to_json(rows).find("the text repeats no token") != std::string::npos);
}

TEST_CASE("census: the file name must end in .csv or .json", "[census][errors]") {
  CHECK(census_format("x.CSV") == ".csv");
  CHECK_THROWS_WITH(census_format("x.txt"), "--census: the file name must end in .csv or .json, got \"x.txt\"");
}

TEST_CASE("census: an encoder-decoder's rows carry their stack and kind, and heads are named by block", "[census]") {
  const std::vector<CensusRow> decoder_only = census_of_block(hand_block());
  CHECK(decoder_only.front().stack.empty());
  CHECK(decoder_only.front().kind.empty());
  CHECK(census_head_name(decoder_only.front()) == "L2H0");

  const CensusCollector census = toy_census(2);
  REQUIRE(census.rows().size() == 3 * 2 * 2);  // 3 kinds of block x 2 layers x 2 heads
  const auto count = [&](const std::string& stack, const std::string& kind) {
    return std::count_if(census.rows().begin(), census.rows().end(),
                         [&](const CensusRow& r) { return r.stack == stack && r.kind == kind; });
  };
  CHECK(count("encoder", "self") == 4);
  CHECK(count("decoder", "self") == 4);
  CHECK(count("decoder", "cross") == 4);
  std::vector<std::string> names;
  for (const CensusRow& r : census.rows()) names.push_back(census_head_name(r));
  CHECK(names == std::vector<std::string>{"enc.L0H0", "enc.L0H1", "enc.L1H0", "enc.L1H1", "dec.L0H0", "dec.L0H1",
                                          "cross.L0H0", "cross.L0H1", "dec.L1H0", "dec.L1H1", "cross.L1H0",
                                          "cross.L1H1"});
  // Cross-attention: entropy yes (head 0, layer 0: rows 0.8/0.1/0.1), positions and induction no.
  const CensusRow& cross = census.rows()[6];
  const double h = -(0.8 * std::log(0.8) + 2 * 0.1 * std::log(0.1));
  CHECK_THAT(cross.stats.entropy_mean, WithinAbs(h, 1e-6));
  CHECK(!cross.stats.previous_mass);
  CHECK(!cross.induction);
  // Encoder layer 1, head 0 on "x y x": query 2 ("x") repeats key 0, whose successor is key 1.
  CHECK_THAT(*census.rows()[2].induction, WithinAbs(0.2, 1e-6));

  const std::string csv = census.file_text("census.csv");
  CHECK(csv.substr(0, csv.find('\n')).rfind("stack,kind,layer,head,entropy_mean,", 0) == 0);
  CHECK(csv.find("\nencoder,self,1,0,") != std::string::npos);
  CHECK(csv.find("\ndecoder,self,1,1,") != std::string::npos);
  CHECK(csv.find("\ndecoder,cross,0,1,") != std::string::npos);
  CHECK(std::count(csv.begin(), csv.end(), '\n') == 1 + 12);
}

TEST_CASE("census: an encoder-decoder's picture has a labelled table per kind of block, none marked masked",
          "[census][render]") {
  const CensusCollector census = toy_census(2);
  ModelRunInfo info;
  info.model.name = "toy";
  info.text = "ab";
  ModelPictureSettings options;
  const std::vector<GridRequest> parts = head_census_requests(census, info, options, 8e9);
  REQUIRE(parts.size() == 3);
  CHECK(parts[0].query_tokens == Tokens{"enc.L0", "enc.L1"});
  CHECK(parts[1].query_tokens == Tokens{"dec.L0", "dec.L1"});
  CHECK(parts[2].query_tokens == Tokens{"cross.L0", "cross.L1"});
  CHECK_THAT(parts[0].figure_title, Catch::Matchers::EndsWith("encoder self-attention"));
  CHECK_THAT(parts[1].figure_title, Catch::Matchers::EndsWith("decoder self-attention"));
  CHECK_THAT(parts[2].figure_title, Catch::Matchers::EndsWith("decoder cross-attention"));
  CHECK(parts[0].panels.size() == 8);  // 7 statistics and the induction score ("x y x" repeats)
  CHECK(parts[1].panels.size() == 7);  // "<s> a b" repeats no token: no induction table
  CHECK(parts[2].panel_titles == std::vector<std::string>{"entropy (nats)", "H / ln k", "max weight"});
  for (const GridRequest& part : parts) {
    CHECK(part.key_tokens == Tokens{"H0", "H1"});
    CHECK(part.max_height_px == options.max_size_px / 3);
  }
  const FontSet fonts;
  for (std::size_t k = 0; k < parts.size(); ++k) {
    INFO("part " << k);
    const GridRequest& part = parts[k];
    CHECK((*part.allowed).minCoeff() == 1);  // every cell holds a value
    const RenderedGrid grid = render_grid(part, fonts);
    CHECK(!mentions_masking(grid.layout.legend_lines));
    // Issue 24 §4: each panel is a statistic with its own range, not a head.
    CHECK(grid.layout.colorbar_scale.caption == "per-statistic min\u2013max (each panel's range in its title)");
    for (const std::string& label : grid.layout.query_labels) CHECK(label.rfind("\u00D7", 0) != 0);  // no "× "
    // Row 1 (layer 1), head 0 of the first panel is drawn in its colour, not hatched.
    const double value = (*part.panels[0])(1, 0);
    const Rgb expected = colormap_by_name("viridis").at(color_position(grid.layout.ranges[0], value));
    CHECK(cell_corner(grid, 0, 1, 0) == expected);
  }
}

TEST_CASE("census: a decoder-only census is one table with plain layer labels", "[census][render]") {
  CensusCollector census;
  census.add(hand_block());
  ModelRunInfo info;
  info.model.name = "toy";
  const std::vector<GridRequest> parts = head_census_requests(census, info, ModelPictureSettings{}, 8e9);
  REQUIRE(parts.size() == 1);
  CHECK(parts[0].query_tokens == Tokens{"L2"});
  CHECK(parts[0].max_height_px == 0);
  CHECK(parts[0].figure_title == "head census \u00B7 toy \u00B7 empty text");  // issue 24: not the model's name
}

// The hostile tester's run: the transliteration model's 18 blocks once mixed into 6 rows, 12
// drawn as "all keys masked".
TEST_CASE("census: the CTranslate2 model's census has every block, labelled, and no masked cell", "[census][ct2]") {
  Ct2Request request;
  request.model_dir = test::data_file("aren-translit/model");
  request.text = "\u0645\u0627\u0643\u062F\u0648\u0646\u0627\u0644\u062F";  // ماكدونالد
  CensusCollector census;
  std::vector<std::string> warnings;
  const ModelRunInfo info = run_ct2_model(request, [&](AttentionBlock&& block) { census.add(block); }, warnings);
  REQUIRE(census.rows().size() == 3 * 6 * 8);
  const std::vector<GridRequest> parts = head_census_requests(census, info, ModelPictureSettings{}, 8e9);
  REQUIRE(parts.size() == 3);
  // Issue 24 §4: the source and its translation, not the translation alone.
  CHECK_THAT(parts[0].figure_title, Catch::Matchers::Contains("\u201C" + *request.text + "\u201D \u2192 \u201Cmcdonald\u201D"));
  const char* prefixes[] = {"enc.L", "dec.L", "cross.L"};
  const FontSet fonts;
  for (std::size_t k = 0; k < parts.size(); ++k) {
    INFO("part " << k);
    REQUIRE(parts[k].query_tokens.size() == 6);
    for (int l = 0; l < 6; ++l) CHECK(parts[k].query_tokens[static_cast<std::size_t>(l)] == prefixes[k] + std::to_string(l));
    CHECK((*parts[k].allowed).minCoeff() == 1);  // every (layer, head) of every block has its values
    const RenderedGrid grid = render_grid(parts[k], fonts);
    CHECK(!mentions_masking(grid.layout.legend_lines));
  }
  CHECK(parts[0].panels.size() == 8);
  CHECK(parts[1].panels.size() == 8);
  CHECK(parts[2].panels.size() == 3);
  // The cells hold their own block's values: decoder self L3H5 leads the previous-token mass.
  const auto best = std::max_element(census.rows().begin(), census.rows().end(), [](const CensusRow& a, const CensusRow& b) {
    return a.stats.previous_mass.value_or(-1) < b.stats.previous_mass.value_or(-1);
  });
  CHECK(census_head_name(*best) == "dec.L3H5");
  CHECK_THAT(*best->stats.previous_mass, WithinAbs(0.464, 5e-4));
  const Eigen::Index previous_panel = 5;
  CHECK(parts[1].panel_titles[previous_panel] == "previous-token mass");
  CHECK_THAT((*parts[1].panels[previous_panel])(3, 5), WithinAbs(*best->stats.previous_mass, 1e-6));
}

// Found by a hostile tester: a one-token run gave previous-token mass 0 (no row i >= 1 exists)
// and H/ln k 0 (0/0); both are undefined, left out of the table and of the ranking.
TEST_CASE("census: a one-token run leaves H/ln k and previous-token mass undefined", "[census]") {
  AttentionBlock block;
  block.layer = 0;
  block.record.layer = 0;
  block.record.causal = true;
  block.record.query_tokens = block.record.key_tokens = {"a"};
  block.record.num_heads = 1;
  block.record.weights = {matrix({{1}})};
  const std::vector<CensusRow> rows = census_of_block(block);
  REQUIRE(rows.size() == 1);
  CHECK_FALSE(rows.front().stats.entropy_normalised_mean.has_value());
  CHECK_FALSE(rows.front().stats.previous_mass.has_value());
  // layer, head, H mean/min/max, H/ln k (empty), max weight, distance, diagonal, previous (empty), first, induction (empty)
  CHECK(census_to_csv(rows).substr(census_to_csv(rows).find('\n') + 1) == "0,0,0,0,0,,1,0,1,,1,\n");
  const nlohmann::json json = nlohmann::json::parse(census_to_json(rows));
  CHECK(json["heads"][0]["entropy_normalised_mean"].is_null());
  CHECK(json["heads"][0]["previous_token_mass"].is_null());
  CensusCollector census;
  census.add(block);
  const std::vector<std::string> titles = head_census_requests(census, ModelRunInfo{}, ModelPictureSettings{}, 8e9).front().panel_titles;
  CHECK(std::find(titles.begin(), titles.end(), "previous-token mass") == titles.end());
  CHECK(std::find(titles.begin(), titles.end(), "H / ln k") == titles.end());
  CHECK(std::find(titles.begin(), titles.end(), "first-token mass") != titles.end());
}

// Issue 23: the HTML report shows the census as text, exactly census.csv's cells (empty ones too).
TEST_CASE("census: text_table is census.csv's header and cells", "[census]") {
  const CensusCollector census = toy_census(2);
  const TextTable table = head_census_table(census);
  const std::string csv = census_to_csv(census.rows());
  std::string joined;
  const auto join = [&](const std::vector<std::string>& row) {
    for (std::size_t c = 0; c < row.size(); ++c) joined += (c == 0 ? "" : ",") + row[c];
    joined += "\n";
  };
  join(table.header);
  for (const std::vector<std::string>& row : table.rows) join(row);
  CHECK(joined == csv);
  REQUIRE(table.rows.size() == census.rows().size());
  CHECK(table.header.front() == "stack");
  CHECK(table.rows.back().size() == table.header.size());
  CHECK(table.rows.back().back().empty());  // cross-attention: no induction score, an empty cell as in the CSV
}
