// Pictures made beside the work that hands them in (issue 38): the same bytes and warnings as
// render_pngs, whatever the workers and the order tickets are taken in; the first failing
// picture in submission order is what is thrown, at take or at a later submit.
#include <catch2/catch.hpp>

#include <algorithm>

#include "core/error.hpp"
#include "render/png.hpp"
#include "render/png_pipeline.hpp"

using namespace attnviz;

namespace {

// DejaVu Sans alone: what it lacks stays missing on a machine with more fonts.
const FontSet& fonts() {
  static const FontSet set({ATTNVIZ_DEFAULT_FONT}, nullptr);
  return set;
}

// Four heads over `n` tokens with varied weights, then their grid (as a layer's pictures come);
// "猫" has no glyph in DejaVu Sans, so every picture has a warning.
std::vector<PngJob> heads_then_grid(int n) {
  GridRequest grid;
  for (int i = 0; i < n; ++i) grid.query_tokens.push_back(i == 1 ? "猫" : "tok" + std::to_string(i));
  grid.key_tokens = grid.query_tokens;
  std::vector<PngJob> jobs;
  for (int h = 0; h < 4; ++h) {
    Matrix m(n, n);
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j) m(i, j) = static_cast<float>((i * 7 + j * 3 + h * 5) % 11) / 10.0f;
    const SharedMatrix panel = share(std::move(m));
    grid.panels.push_back(panel);
    GridRequest single = grid;
    single.panels = {panel};
    jobs.push_back({single, "out/head_" + std::to_string(h) + ".png"});
  }
  jobs.push_back({grid, "out/grid.png"});
  return jobs;
}

}  // namespace

TEST_CASE("png_pipeline: each picture is render_pngs' own, for any workers and taking order", "[render]") {
  const std::vector<PngJob> jobs = heads_then_grid(12);
  const std::vector<RenderedPng> expected = render_pngs(jobs, fonts(), 1);
  const int workers = GENERATE(1, 2, 3, 8);
  const bool reversed = GENERATE(false, true);
  PngPipeline pipeline(fonts(), workers);
  CHECK(pipeline.workers() == workers);
  std::vector<std::size_t> tickets;
  for (const PngJob& job : jobs) tickets.push_back(pipeline.submit(job));
  CHECK(tickets == std::vector<std::size_t>{0, 1, 2, 3, 4});
  std::vector<std::size_t> order(jobs.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = reversed ? order.size() - 1 - i : i;
  for (std::size_t i : order) {
    const RenderedPng picture = pipeline.take(tickets[i]);
    CHECK(picture.bytes == expected[i].bytes);
    CHECK(picture.warnings == expected[i].warnings);
    CHECK_FALSE(picture.warnings.empty());
  }
}

TEST_CASE("png_pipeline: one pipeline serves layer after layer", "[render]") {
  const std::vector<PngJob> small = heads_then_grid(5), large = heads_then_grid(20);
  const std::vector<RenderedPng> expected_small = render_pngs(small, fonts(), 1);
  const std::vector<RenderedPng> expected_large = render_pngs(large, fonts(), 1);
  PngPipeline pipeline(fonts(), 2);
  for (int layer = 0; layer < 3; ++layer) {
    const std::vector<PngJob>& jobs = layer % 2 ? large : small;
    const std::vector<RenderedPng>& expected = layer % 2 ? expected_large : expected_small;
    std::vector<std::size_t> tickets;
    for (const PngJob& job : jobs) tickets.push_back(pipeline.submit(job));
    for (std::size_t i = 0; i < jobs.size(); ++i) CHECK(pipeline.take(tickets[i]).bytes == expected[i].bytes);
  }
}

TEST_CASE("png_pipeline: the first failing picture in submission order is what is thrown", "[render][errors]") {
  std::vector<PngJob> jobs = heads_then_grid(12);
  jobs[1].request.cmap = "no-such-map";  // UsageError
  jobs[3].request.max_memory_bytes = 1;  // LimitError
  const int workers = GENERATE(1, 2, 5);
  {
    PngPipeline pipeline(fonts(), workers);
    std::vector<std::size_t> tickets;
    // A submit after the failure may throw it already; else taking in order finds it.
    const auto submit_all_then_take = [&] {
      for (const PngJob& job : jobs) tickets.push_back(pipeline.submit(job));
      for (std::size_t t : tickets) pipeline.take(t);
    };
    CHECK_THROWS_AS(submit_all_then_take(), UsageError);
  }
  jobs[1].request.cmap = "viridis";
  {
    PngPipeline pipeline(fonts(), workers);
    std::vector<std::size_t> tickets;
    for (std::size_t i = 0; i < 3; ++i) tickets.push_back(pipeline.submit(jobs[i]));
    for (std::size_t t : tickets) CHECK_FALSE(pipeline.take(t).bytes.empty());  // before the failure: made
    CHECK_THROWS_AS([&] {
      const std::size_t failing = pipeline.submit(jobs[3]);
      const std::size_t after = pipeline.submit(jobs[4]);
      pipeline.take(failing);
      pipeline.take(after);
    }(), LimitError);
  }
}

TEST_CASE("png_pipeline: pictures not taken are dropped when it ends", "[render]") {
  // An error elsewhere in a run ends it with pictures waiting and being made: the pipeline
  // stops without making them all (no hang; nothing leaks under ASan).
  const std::vector<PngJob> jobs = heads_then_grid(8);
  const std::vector<RenderedPng> expected = render_pngs(jobs, fonts(), 1);
  PngPipeline pipeline(fonts(), 2);
  const std::size_t first = pipeline.submit(jobs[0]);
  for (std::size_t i = 1; i < jobs.size(); ++i) pipeline.submit(jobs[i]);
  CHECK(pipeline.take(first).bytes == expected[0].bytes);
}
