// PNG bytes decode back to the same pixels; the encoder is deterministic (never compare bytes
// with a file: compare decoded pixels).
#include <catch2/catch.hpp>
#include <stb_image.h>

#include <memory>

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

}  // namespace

TEST_CASE("png: decodes to the same size and identical pixels", "[render]") {
  const Image image = gradient(37, 19);
  const std::string bytes = attnviz::encode_png(image);
  int width = 0, height = 0, channels = 0;
  std::unique_ptr<stbi_uc, void (*)(void*)> pixels(
      stbi_load_from_memory(reinterpret_cast<const stbi_uc*>(bytes.data()),
                            static_cast<int>(bytes.size()), &width, &height, &channels, 3),
      stbi_image_free);
  REQUIRE(pixels != nullptr);
  CHECK(width == 37);
  CHECK(height == 19);
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

TEST_CASE("png: the same image always gives the same bytes", "[render]") {
  const Image image = gradient(64, 8);
  CHECK(attnviz::encode_png(image) == attnviz::encode_png(image));
}

TEST_CASE("png: an empty image is an OutputError naming the destination", "[render][errors]") {
  CHECK_THROWS_AS(attnviz::encode_png(Image(), "out/head_0.png"), attnviz::OutputError);
  CHECK_THROWS_WITH(attnviz::encode_png(Image(0, 4, Rgb{}), "out/head_0.png"),
                    Catch::Contains("out/head_0.png") && Catch::Contains("0 x 4"));
}
