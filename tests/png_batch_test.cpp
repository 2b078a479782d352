// Several pictures on worker threads: the same bytes and warnings as one by one, in job order,
// for any thread count; the first failing job's error (issue 7).
#include <catch2/catch.hpp>

#include "core/error.hpp"
#include "render/png.hpp"
#include "render/png_batch.hpp"

using namespace attnviz;

namespace {

// DejaVu Sans alone: what it lacks stays missing on a machine with more fonts (issue 24).
const FontSet& fonts() {
  static const FontSet set({ATTNVIZ_DEFAULT_FONT}, nullptr);
  return set;
}

// A grid of `n_heads` panels over `n` tokens with varied weights; "猫" has no glyph in DejaVu
// Sans, so every picture also has a warning.
GridRequest request(int n, int n_heads) {
  GridRequest r;
  for (int i = 0; i < n; ++i) r.query_tokens.push_back(i == 1 ? "猫" : "tok" + std::to_string(i));
  r.key_tokens = r.query_tokens;
  for (int h = 0; h < n_heads; ++h) {
    Matrix m(n, n);
    for (int i = 0; i < n; ++i) {
      for (int j = 0; j < n; ++j) m(i, j) = static_cast<float>((i * 7 + j * 3 + h * 5) % 11) / 10.0f;
    }
    r.panels.push_back(share(std::move(m)));
  }
  return r;
}

std::vector<PngJob> grid_and_heads() {
  std::vector<PngJob> jobs{{request(12, 4), "out/grid.png"}};
  for (int h = 0; h < 4; ++h) {
    GridRequest single = request(12, 1);
    Matrix shifted = *single.panels.front();
    shifted.array() += static_cast<float>(h) / 100.0f;
    single.panels.front() = share(std::move(shifted));
    jobs.push_back({single, "out/head_" + std::to_string(h) + ".png"});
  }
  return jobs;
}

}  // namespace

TEST_CASE("png_batch: each picture is render_grid then encode_png, in job order", "[render]") {
  const std::vector<PngJob> jobs = grid_and_heads();
  const int threads = GENERATE(1, 2, 3, 8, 0);
  const std::vector<RenderedPng> pictures = render_pngs(jobs, fonts(), threads);
  REQUIRE(pictures.size() == jobs.size());
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    const RenderedGrid expected = render_grid(jobs[i].request, fonts());
    CHECK(pictures[i].bytes == encode_png(expected.image));
    CHECK(pictures[i].warnings == expected.warnings);
    CHECK_FALSE(pictures[i].warnings.empty());
  }
}

TEST_CASE("png_batch: no jobs, no pictures", "[render]") {
  CHECK(render_pngs({}, fonts(), 2).empty());
}

TEST_CASE("png_batch: the first failing job in job order is what is thrown", "[render][errors]") {
  std::vector<PngJob> jobs = grid_and_heads();
  jobs[1].request.cmap = "no-such-map";      // UsageError
  jobs[3].request.max_memory_bytes = 1;      // LimitError
  const int threads = GENERATE(1, 2, 5);
  CHECK_THROWS_AS(render_pngs(jobs, fonts(), threads), UsageError);
  jobs[1].request.cmap = "viridis";
  jobs[2].request.max_memory_bytes = 1;
  CHECK_THROWS_AS(render_pngs(jobs, fonts(), threads), LimitError);
}
