// The in-memory raster: clipping, blending, blitting and stacking.
#include <catch2/catch.hpp>

#include "render/image.hpp"

using attnviz::Image;
using attnviz::Rgb;

namespace {
constexpr Rgb kWhite{255, 255, 255};
constexpr Rgb kBlack{0, 0, 0};
constexpr Rgb kRed{255, 0, 0};
}  // namespace

TEST_CASE("image: starts filled with the background and has its size", "[render]") {
  const Image image(7, 3, kRed);
  CHECK(image.width_px() == 7);
  CHECK(image.height_px() == 3);
  CHECK(image.at(0, 0) == kRed);
  CHECK(image.at(6, 2) == kRed);
}

TEST_CASE("image: fill_rect is clipped to the image", "[render]") {
  Image image(4, 4, kWhite);
  image.fill_rect({2, -3, 10, 5}, kBlack);  // covers columns 2..3, rows 0..1
  CHECK(image.at(2, 0) == kBlack);
  CHECK(image.at(3, 1) == kBlack);
  CHECK(image.at(1, 1) == kWhite);
  CHECK(image.at(2, 2) == kWhite);
}

TEST_CASE("image: blend is exact at alpha 0 and 255 and mixes in between", "[render]") {
  Image image(2, 1, kWhite);
  image.blend(0, 0, kBlack, 255);
  image.blend(1, 0, kBlack, 0);
  image.blend(5, 5, kBlack, 255);  // outside: ignored
  CHECK(image.at(0, 0) == kBlack);
  CHECK(image.at(1, 0) == kWhite);
  image.blend(1, 0, kBlack, 128);  // (255 * 127 + 127) / 255 = 127
  CHECK(image.at(1, 0) == Rgb{127, 127, 127});
}

TEST_CASE("image: blit copies with an offset and clips", "[render]") {
  Image target(3, 3, kWhite);
  const Image source(2, 2, kRed);
  target.blit(source, 2, -1);
  CHECK(target.at(2, 0) == kRed);
  CHECK(target.at(1, 0) == kWhite);
  CHECK(target.at(2, 1) == kWhite);
}

TEST_CASE("image: stack_vertically centres images one above the other", "[render]") {
  const Image top(4, 2, kRed);
  const Image bottom(2, 3, kBlack);
  const Image stacked = attnviz::stack_vertically({top, bottom}, kWhite);
  CHECK(stacked.width_px() == 4);
  CHECK(stacked.height_px() == 5);
  CHECK(stacked.at(0, 1) == kRed);
  CHECK(stacked.at(0, 2) == kWhite);
  CHECK(stacked.at(1, 2) == kBlack);
  CHECK(stacked.at(2, 4) == kBlack);
  CHECK(stacked.at(3, 4) == kWhite);
}
