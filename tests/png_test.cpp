// PNG bytes decode back to the same pixels; the encoder is deterministic (never compare bytes
// with a file: compare decoded pixels).
#include <catch2/catch.hpp>
#include <stb_image.h>

#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "core/error.hpp"
#include "render/png.hpp"

using attnviz::Image;
using attnviz::Rgb;

namespace {

Image gradient(int width_px, int height_px) {
  Image image(width_px, height_px, Rgb{});
  for (int y = 0; y < height_px; ++y) {
    for (int x = 0; x < width_px; ++x) {
      image.set(x, y, Rgb{static_cast<std::uint8_t>(x * 7), static_cast<std::uint8_t>(y * 13),
                          static_cast<std::uint8_t>((x + y) % 256)});
    }
  }
  return image;
}

// A heatmap-like picture: flat cells of many pixels, so most rows repeat the row above, with a
// few lines of noise like anti-aliased text.
Image cells_and_noise(int width_px, int height_px) {
  constexpr int kCellPx = 20;
  Image image(width_px, height_px, Rgb{255, 255, 255});
  for (int y = 0; y < height_px; ++y) {
    for (int x = 0; x < width_px; ++x) {
      const int cell = (x / kCellPx) * 31 + (y / kCellPx) * 17;
      image.set(x, y, Rgb{static_cast<std::uint8_t>(cell), static_cast<std::uint8_t>(cell * 3),
                          static_cast<std::uint8_t>(255 - cell)});
    }
  }
  for (int y = 0; y < height_px; y += 37) {
    for (int x = 0; x < width_px; ++x) {
      image.set(x, y, Rgb{static_cast<std::uint8_t>(x * x), static_cast<std::uint8_t>(x ^ y), 9});
    }
  }
  return image;
}

// One row of noise (nothing to compress within it), repeated: compresses only through the
// repetition.
Image repeated_noise_row(int width_px, int height_px) {
  Image image(width_px, height_px, Rgb{});
  std::uint32_t state = 12345;
  for (int x = 0; x < width_px; ++x) {
    state = state * 1664525u + 1013904223u;  // Numerical Recipes' LCG
    const Rgb pixel{static_cast<std::uint8_t>(state >> 24), static_cast<std::uint8_t>(state >> 16),
                    static_cast<std::uint8_t>(state >> 8)};
    for (int y = 0; y < height_px; ++y) image.set(x, y, pixel);
  }
  return image;
}

// Decodes `bytes` with stb_image and checks size and every pixel against `image`.
void require_decodes_to(const std::string& bytes, const Image& image) {
  int width = 0, height = 0, channels = 0;
  std::unique_ptr<stbi_uc, void (*)(void*)> pixels(
      stbi_load_from_memory(reinterpret_cast<const stbi_uc*>(bytes.data()),
                            static_cast<int>(bytes.size()), &width, &height, &channels, 3),
      stbi_image_free);
  REQUIRE(pixels != nullptr);
  CHECK(width == image.width_px());
  CHECK(height == image.height_px());
  CHECK(channels == 3);
  bool identical = true;
  for (int y = 0; y < height; ++y) {
    for (int x = 0; x < width; ++x) {
      const stbi_uc* p = pixels.get() + (y * width + x) * 3;
      identical = identical && Rgb{p[0], p[1], p[2]} == image.at(x, y);
    }
  }
  CHECK(identical);
}

}  // namespace

TEST_CASE("png: decodes to the same size and identical pixels", "[render]") {
  const Image image = gradient(37, 19);
  const std::string bytes = attnviz::encode_png(image);
  require_decodes_to(bytes, image);
}

TEST_CASE("png: heatmap-like images round-trip exactly, in one pixel and over many IDAT chunks",
          "[render]") {
  SECTION("1 x 1") { require_decodes_to(attnviz::encode_png(gradient(1, 1)), gradient(1, 1)); }
  SECTION("one row, one column") {
    require_decodes_to(attnviz::encode_png(cells_and_noise(301, 1)), cells_and_noise(301, 1));
    require_decodes_to(attnviz::encode_png(cells_and_noise(1, 301)), cells_and_noise(1, 301));
  }
  SECTION("large enough for several 64 KB IDAT chunks") {
    const Image image = cells_and_noise(1500, 900);
    const std::string bytes = attnviz::encode_png(image);
    CHECK(bytes.size() > std::size_t{1} << 16);
    require_decodes_to(bytes, image);
  }
}

TEST_CASE("png: flat runs compress well (issue 7: heatmaps are mostly repeated rows)", "[render]") {
  const Image image = cells_and_noise(640, 640);
  const std::size_t raw_bytes = 640 * 640 * 3;
  CHECK(attnviz::encode_png(image).size() < raw_bytes / 10);
}

TEST_CASE("png: repeated rows compress at every width (issue 11: no filter within deflate's window, "
          "\"up\" beyond it)", "[render]") {
  // 10 835 px is the widest row (3 bytes a pixel + the filter byte) that deflate can still match
  // one row back; one pixel more must not lose the repetition.
  for (const int width_px : {300, 10835, 10836, 12000}) {
    CAPTURE(width_px);
    const Image image = repeated_noise_row(width_px, 40);
    const std::string bytes = attnviz::encode_png(image);
    CHECK(bytes.size() < static_cast<std::size_t>(width_px) * 40 * 3 / 10);
    require_decodes_to(bytes, image);
  }
}

TEST_CASE("png: encoding on several threads at once gives the same bytes as one at a time",
          "[render]") {
  const std::vector<Image> images = {cells_and_noise(800, 500), gradient(300, 200),
                                     cells_and_noise(97, 403), gradient(64, 8)};
  std::vector<std::string> serial;
  for (const Image& image : images) serial.push_back(attnviz::encode_png(image));
  std::vector<std::string> parallel(images.size());
  std::vector<std::thread> threads;
  for (std::size_t i = 0; i < images.size(); ++i) {
    threads.emplace_back([&, i] { parallel[i] = attnviz::encode_png(images[i]); });
  }
  for (std::thread& thread : threads) thread.join();
  CHECK(parallel == serial);
}

TEST_CASE("png: the same image always gives the same bytes", "[render]") {
  const Image image = gradient(64, 8);
  CHECK(attnviz::encode_png(image) == attnviz::encode_png(image));
}

TEST_CASE("png: an empty image is an OutputError naming the destination", "[render][errors]") {
  CHECK_THROWS_AS(attnviz::encode_png(Image(), "out/head_0.png"), attnviz::OutputError);
  CHECK_THROWS_WITH(attnviz::encode_png(Image(0, 4, Rgb{}), "out/head_0.png"),
                    Catch::Contains("out/head_0.png") && Catch::Contains("0 x 4"));
}
