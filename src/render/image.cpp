#include "render/image.hpp"

#include <algorithm>
#include <cassert>
#include <cstring>

namespace attnviz {

namespace {

constexpr int kChannels = Image::kBytesPerPixel;
constexpr int kOpaque = 255;  // alpha of full coverage

// Clips [start, start + length) to [0, limit); returns the clipped start and length (>= 0).
std::pair<int, int> clip_span(int start, int length, int limit) {
  const int begin = std::clamp(start, 0, limit);
  const int end = std::clamp(start + length, 0, limit);
  return {begin, std::max(0, end - begin)};
}

}  // namespace

Image::Image(int width_px, int height_px, Rgb background)
    : width_px_(width_px), height_px_(height_px) {
  assert(width_px >= 0 && height_px >= 0);
  pixels_.resize(static_cast<std::size_t>(width_px) * static_cast<std::size_t>(height_px) *
                 kChannels);
  fill_rect({0, 0, width_px, height_px}, background);
}

void Image::fill_rect(const Rect& rect, Rgb colour) {
  const auto [x0, w] = clip_span(rect.x_px, rect.width_px, width_px_);
  const auto [y0, h] = clip_span(rect.y_px, rect.height_px, height_px_);
  if (w == 0 || h == 0) return;
  std::uint8_t* first = row(y0) + static_cast<std::size_t>(x0) * kChannels;
  for (int i = 0; i < w; ++i) {
    first[i * kChannels + 0] = colour.r;
    first[i * kChannels + 1] = colour.g;
    first[i * kChannels + 2] = colour.b;
  }
  repeat_row_span(x0, y0, w, h - 1);
}

void Image::repeat_row_span(int x, int y, int width, int count) {
  const auto [x0, w] = clip_span(x, width, width_px_);
  if (w == 0 || y < 0 || y >= height_px_) return;
  const std::uint8_t* source = row(y) + static_cast<std::size_t>(x0) * kChannels;
  const int last = std::min(height_px_ - 1, y + count);
  for (int yy = y + 1; yy <= last; ++yy) {
    std::memcpy(row(yy) + static_cast<std::size_t>(x0) * kChannels, source,
                static_cast<std::size_t>(w) * kChannels);
  }
}

void Image::blend(int x, int y, Rgb colour, std::uint8_t alpha) {
  if (x < 0 || y < 0 || x >= width_px_ || y >= height_px_ || alpha == 0) return;
  std::uint8_t* p = row(y) + static_cast<std::size_t>(x) * kChannels;
  const std::uint8_t source[kChannels] = {colour.r, colour.g, colour.b};
  for (int c = 0; c < kChannels; ++c) {
    // Integer "over" with rounding: (s·a + d·(255 − a) + 127) / 255, exact at a = 0 and 255.
    const int mixed = source[c] * alpha + p[c] * (kOpaque - alpha) + kOpaque / 2;
    p[c] = static_cast<std::uint8_t>(mixed / kOpaque);
  }
}

void Image::blit(const Image& source, int x, int y) {
  const auto [x0, w] = clip_span(x, source.width_px_, width_px_);
  const auto [y0, h] = clip_span(y, source.height_px_, height_px_);
  for (int row_index = 0; row_index < h; ++row_index) {
    const std::uint8_t* from =
        source.row(y0 - y + row_index) + static_cast<std::size_t>(x0 - x) * kChannels;
    std::memcpy(row(y0 + row_index) + static_cast<std::size_t>(x0) * kChannels, from,
                static_cast<std::size_t>(w) * kChannels);
  }
}

Image stack_vertically(const std::vector<Image>& images, Rgb background) {
  int width_px = 0;
  int height_px = 0;
  for (const Image& image : images) {
    width_px = std::max(width_px, image.width_px());
    height_px += image.height_px();
  }
  Image stacked(width_px, height_px, background);
  int y = 0;
  for (const Image& image : images) {
    stacked.blit(image, (width_px - image.width_px()) / 2, y);
    y += image.height_px();
  }
  return stacked;
}

}  // namespace attnviz
