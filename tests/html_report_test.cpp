// The HTML report's text (issue 14): self-contained (no URL, no request), the data block cannot
// be ended by a token, the exact float32 weights are embedded, large pages switch to 16 bits,
// and the same input gives the same bytes. The page's behaviour is tested in a real browser by
// tests/browser/report_test.py.
#include <catch2/catch.hpp>

#include "render/colormap.hpp"
#include "render/html_report.hpp"

using namespace attnviz;
using Catch::Matchers::Contains;

namespace {

// DejaVu Sans alone: what it lacks stays missing on a machine with more fonts (issue 24).
const FontSet& fonts() {
  static const FontSet set({ATTNVIZ_DEFAULT_FONT}, nullptr);
  return set;
}

GridRequest request_with(const Tokens& tokens, const Matrix& weights) {
  GridRequest request;
  request.query_tokens = request.key_tokens = tokens;
  request.panels = {share(weights)};
  request.panel_titles = {"L0H0 · head 0 of 1"};
  request.figure_title = "attention · layer 0";
  return request;
}

std::string data_block(const std::string& page) {
  const std::string open = "<script type=\"application/json\" id=\"attnviz-data\">";
  const std::size_t start = page.find(open) + open.size();
  return page.substr(start, page.find("</script>", start) - start);
}

}  // namespace

TEST_CASE("html_report: a token that is markup stays inside the data block as text", "[render]") {
  Matrix w(2, 2);
  w << 0.5f, 0.5f, 0.25f, 0.75f;
  const ReportView view =
      report_view(request_with({"</script><script>alert(1)</script>", "<img src=x onerror=alert(2)>"}, w), fonts(), "layer", {"L0H0"});
  const std::string page = html_report({"a </script> title", {view}, false});
  const std::string data = data_block(page);
  CHECK(data.find('<') == std::string::npos);
  CHECK(data.find('>') == std::string::npos);
  CHECK_THAT(data, Contains("\\u003c/script\\u003e\\u003cscript\\u003ealert(1)"));
  CHECK_THAT(page, Contains("<title>a &lt;/script&gt; title</title>"));
  // The script element count: the data block and the page's own script, nothing else.
  std::size_t scripts = 0;
  for (std::size_t at = page.find("<script"); at != std::string::npos; at = page.find("<script", at + 1)) ++scripts;
  CHECK(scripts == 2);
}

TEST_CASE("html_report: the page requests nothing", "[render]") {
  const ReportView view = report_view(request_with({"a", "b"}, Matrix::Constant(2, 2, 0.5f)), fonts(), "layer", {"L0H0"});
  const std::string page = html_report({"t", {view}, false});
  CHECK(page.find("http:") == std::string::npos);
  CHECK(page.find("https:") == std::string::npos);
  CHECK(page.find("<link") == std::string::npos);
  CHECK(page.find("@import") == std::string::npos);
  CHECK(page.find("url(") == std::string::npos);
  CHECK_THAT(page, Contains("Content-Security-Policy\" content=\"default-src 'none';"));
  CHECK(page == html_report({"t", {view}, false}));
}

TEST_CASE("html_report: weights are the exact float32 values, masked cells left out", "[render]") {
  Matrix w(2, 2);
  w << 1, 0, 0.25f, 0.75f;
  GridRequest request = request_with({"a", "b"}, w);
  MaskMatrix allowed(2, 2);
  allowed << 1, 0, 1, 1;
  request.allowed = share(allowed);
  const ReportView view = report_view(request, fonts(), "layer", {"L0H0"});
  CHECK(view.values == std::vector<float>{1, 0.25f, 0.75f});
  CHECK(view.allowed == std::vector<std::uint8_t>{1, 0, 1, 1});
  const std::string data = data_block(html_report({"t", {view}, false}));
  // 1.0f, 0.25f, 0.75f little-endian: 00 00 80 3f, 00 00 80 3e, 00 00 40 3f.
  CHECK_THAT(data, Contains("\"encoding\":\"f32\",\"values\":\"AACAPwAAgD4AAEA/\""));
  CHECK_THAT(data, Contains("\"allowed\":\"AQABAQ==\""));
  CHECK_THAT(data, Contains("\"panels\":[{\"name\":\"L0H0\",\"title\":\"L0H0 · head 0 of 1\",\"range\":[0,1]}]"));
  CHECK_THAT(data, Contains("\"ticks\":[[0,\"0\"],[0.25,\"0.25\"],[0.5,\"0.5\"],[0.75,\"0.75\"],[1,\"1\"]]"));
}

TEST_CASE("html_report: the colour map is matplotlib's table, entry by entry", "[render]") {
  const ReportView view = report_view(request_with({"a"}, Matrix::Constant(1, 1, 1.0f)), fonts(), "layer", {"L0H0"});
  const std::string data = data_block(html_report({"t", {view}, false}));
  // viridis entry 0 is #440154 and entry 255 #fde725 (matplotlib _cm_listed.py).
  CHECK_THAT(data, Contains("\"colormaps\":{\"viridis\":\"440154"));
  CHECK_THAT(data, Contains("fde725\"}"));
}

TEST_CASE("html_report: past kMaxExactReportValues values are 16-bit steps and the page says so", "[render]") {
  const int n = 1025;  // 1025 x 1025 > 2^20 values
  Tokens tokens;
  for (int i = 0; i < n; ++i) tokens.push_back("t");
  Matrix w = Matrix::Constant(n, n, 0.0f);
  w(0, 0) = 1;
  w(0, 1) = 0.5f;
  const ReportView view = report_view(request_with(tokens, w), fonts(), "layer", {"L0H0"});
  const std::string page = html_report({"t", {view}, false});
  const std::string data = data_block(page);
  // 0 -> 0, 1 -> 65535 (ff ff), 0.5 -> round(32767.5) = 32768 (00 80): "//8AgAAA" starts the values.
  CHECK_THAT(data, Contains("\"encoding\":\"u16\",\"lo\":0,\"hi\":1,\"values\":\"//8AgAAA"));
  CHECK_THAT(page, Contains("16-bit steps"));
}

// Issue 23: the page colours --scale log and --exclude-sink as the PNG does, marks the prompt's
// end and carries compare's statistics table as text.
TEST_CASE("html_report: log ranges, prompt and sink marks, first query and tables reach the page", "[render]") {
  Matrix w(3, 3);
  w << 1, 0, 0, 0.5f, 0.5f, 0, 0.2f, 0.3f, 0.5f;
  GridRequest request = request_with({"<s>", "a", "b"}, w);
  request.scale = ScaleMode::Log;
  request.prompt_query_rows = request.prompt_key_cols = 2;
  request.first_query_index = 0;
  ReportPage page{"log", {report_view(request, fonts(), "layer", {"L0H0"})}, false};
  page.prompt_length = 2;
  page.tables.push_back({"statistics", {"head", "H_mean"}, {{"L0H0", "0.5"}}, "note <b>"});
  const std::string data = data_block(html_report(page));
  CHECK_THAT(data, Contains("\"range\":[1e-04,1,1]"));
  CHECK_THAT(data, Contains("\"promptRows\":2,\"promptCols\":2,\"firstQuery\":0,\"excludeSink\":false"));
  CHECK_THAT(data, Contains("\"promptLength\":2"));
  CHECK_THAT(data, Contains("\"tables\":[{\"title\":\"statistics\",\"header\":[\"head\",\"H_mean\"],\"rows\":[[\"L0H0\",\"0.5\"]],"
                            "\"note\":\"note \\u003cb\\u003e\"}]"));
  request.scale = ScaleMode::Fixed;
  CHECK_THAT(data_block(html_report({"fixed", {report_view(request, fonts(), "layer", {"L0H0"})}, false})),
             Contains("\"range\":[0,1]"));
}

TEST_CASE("html_report: the run's other files reach the page as relative links, the first main_links apart", "[render]") {
  Matrix w(1, 1);
  w << 1;
  ReportPage page{"links", {report_view(request_with({"<s>"}, w), fonts(), "layer", {"L0H0"})}, true};
  page.links = {{"overview.png", "overview.png (every layer)"}, {"layer_0/<b>.png", "layer_0/<b>.png"}};
  page.main_links = 1;
  const std::string data = data_block(html_report(page));
  CHECK_THAT(data, Contains("\"links\":[{\"href\":\"overview.png\",\"text\":\"overview.png (every layer)\",\"main\":true},"
                            "{\"href\":\"layer_0/\\u003cb\\u003e.png\",\"text\":\"layer_0/\\u003cb\\u003e.png\",\"main\":false}]"));
  CHECK_THAT(data_block(html_report({"none", page.views, true})), Contains("\"links\":[]"));
}

// Issue 25: cells outside a sliding window keep the PNG's other hatch in the page (allowed byte 2)
// and their legend line; a view without such cells stores 0/1 only and no legend.
TEST_CASE("html_report: cells outside a sliding window are stored apart, with their legend line", "[render]") {
  Matrix w(3, 3);
  w << 1, 0, 0, 0.5f, 0.5f, 0, 0, 0.5f, 0.5f;
  GridRequest request = request_with({"a", "b", "c"}, w);
  MaskMatrix allowed(3, 3), outside = MaskMatrix::Zero(3, 3);
  allowed << 1, 0, 0, 1, 1, 0, 0, 1, 1;
  outside(2, 0) = 1;
  request.allowed = share(allowed);
  request.one_run_masked = share(outside);
  request.one_run_legend = "cross-hatched: outside the sliding window of 2 tokens";
  const ReportView view = report_view(request, fonts(), "layer", {"L0H0"});
  CHECK(view.allowed == std::vector<std::uint8_t>{1, 0, 0, 1, 1, 0, 2, 1, 1});
  CHECK(view.values == std::vector<float>{1, 0.5f, 0.5f, 0.5f, 0.5f});
  const std::string data = data_block(html_report({"window", {view}, false}));
  CHECK_THAT(data, Contains("\"oneRunLegend\":\"cross-hatched: outside the sliding window of 2 tokens\""));
  request.one_run_masked = nullptr;
  const ReportView plain = report_view(request, fonts(), "layer", {"L0H0"});
  CHECK(plain.allowed == std::vector<std::uint8_t>{1, 0, 0, 1, 1, 0, 0, 1, 1});
  CHECK_THAT(data_block(html_report({"plain", {plain}, false})), !Contains("oneRunLegend"));
}

// A compare of two runs with different masks: each panel keeps its own run's mask and values
// (the cells the other run masks are shown, not dropped), as the PNG draws them.
TEST_CASE("html_report: a panel with a mask of its own keeps its cells", "[render]") {
  Matrix causal(2, 2), full(2, 2);
  causal << 1, 0, 0.5f, 0.5f;
  full << 0.75f, 0.25f, 0.5f, 0.5f;
  GridRequest request = request_with({"a", "b"}, causal);
  request.panels.push_back(share(full));
  MaskMatrix lower(2, 2), all = MaskMatrix::Ones(2, 2), one_run = MaskMatrix::Zero(2, 2);
  lower << 1, 0, 1, 1;
  one_run(0, 1) = 1;
  request.allowed = share(lower);  // allowed in both runs
  request.panel_allowed = {share(lower), share(all)};
  request.one_run_masked = share(one_run);
  const ReportView view = report_view(request, fonts(), "weights", {"A", "B"});
  CHECK(view.allowed == std::vector<std::uint8_t>{1, 2, 1, 1});
  REQUIRE(view.panel_allowed.size() == 2);
  CHECK(view.panel_allowed[0] == std::vector<std::uint8_t>{1, 2, 1, 1});
  CHECK(view.panel_allowed[1] == std::vector<std::uint8_t>{1, 1, 1, 1});
  CHECK(view.values == std::vector<float>{1, 0.5f, 0.5f, 0.75f, 0.25f, 0.5f, 0.5f});
  CHECK_THAT(data_block(html_report({"compare", {view}, false})), Contains("\"panelAllowed\":[\"AQIBAQ==\",\"AQEBAQ==\"]"));
  request.panel_allowed.clear();
  CHECK(report_view(request, fonts(), "weights", {"A", "B"}).panel_allowed.empty());
}
