#include "render/png.hpp"

#include <png.h>

#include <csetjmp>
#include <cstring>
#include <new>

#include "core/error.hpp"

namespace attnviz {

namespace {

// Issue 7, measured on the 32-token, 8-head case (grid 3130 x 1589 px, head 874 x 813 px), best
// of 9 on an idle core; the table is in the commit that chose this. zlib level 1: heatmaps are
// runs of identical rows (every cell is many pixels tall) and level 1 skips through long matches
// without hashing them. Grid 27 ms / 216 KB, head 4.3 ms / 58 KB, against stb_image_write (level
// 5, filter none) 65 ms / 350 KB and 10 ms / 66 KB. Z_RLE was slower and 3x larger; other window
// and memory levels were no faster; libdeflate (levels 1-6, one whole-image call) was 15-45%
// slower than libpng + zlib level 1 on the same filtered rows (issue 11 measurement).
constexpr int kCompressionLevel = 1;
// Row filter (issue 11, stories260K 32-token pictures, 10 encodes each, one core): with no
// filter a repeated row is one long match at distance = the row's length, found as cheaply as
// the zeros the "up" filter would make of it, and libpng skips computing the filter: grid 2466 x
// 1285 px 15.9 ms / 236 KB against 19.3 ms / 203 KB with "up", head 743 x 675 px 2.9 / 3.5 ms
// (62 KB both), 128 tokens 3586 x 1861 px 32.7 / 39.1 ms (500 / 400 KB). The match needs the
// previous row inside deflate's 32 KiB window (minus its 262-byte lookahead), so wider images
// keep "up", which makes a repeated row zeros whatever its length.
constexpr std::size_t kDeflateReach = (std::size_t{1} << 15) - 262;

int row_filter(const Image& image) {
  const std::size_t row_bytes = static_cast<std::size_t>(image.width_px()) * 3 + 1;  // + filter byte
  return row_bytes <= kDeflateReach ? PNG_FILTER_NONE : PNG_FILTER_UP;
}

constexpr std::size_t kIdatBytes = std::size_t{1} << 16;  // zlib output buffer = IDAT chunk size
constexpr std::size_t kMessageBytes = 200;

// What the libpng callbacks share with encode_png: the bytes written so far and, after a
// failure, libpng's message.
struct Output {
  std::string bytes;
  char message[kMessageBytes] = "";
};

// libpng calls these from C, so nothing may throw through them: errors leave by png_longjmp
// back to the setjmp in write_rows().
[[noreturn]] void on_error(png_structp png, png_const_charp message) {
  Output* out = static_cast<Output*>(png_get_error_ptr(png));
  std::strncpy(out->message, message, kMessageBytes - 1);
  png_longjmp(png, 1);
}

void on_warning(png_structp, png_const_charp) {}  // library code never prints

void append_bytes(png_structp png, png_bytep data, std::size_t size) {
  Output* out = static_cast<Output*>(png_get_io_ptr(png));
  bool appended = false;
  try {
    out->bytes.append(reinterpret_cast<const char*>(data), size);
    appended = true;
  } catch (const std::bad_alloc&) {
  }
  if (!appended) png_error(png, "out of memory");
}

void flush_nothing(png_structp) {}

// Owns libpng's write state.
struct PngWriter {
  png_structp png = nullptr;
  png_infop info = nullptr;
  ~PngWriter() { png_destroy_write_struct(&png, info != nullptr ? &info : nullptr); }
};

// Writes the whole PNG into `out`. Returns false after a libpng error (message in `out`). No
// object with a destructor lives in this frame, so libpng's longjmp out of it is safe.
bool write_rows(const PngWriter& writer, const Image& image, Output& out) {
  png_structp png = writer.png;
  if (setjmp(png_jmpbuf(png)) != 0) return false;
  png_set_write_fn(png, &out, append_bytes, flush_nothing);
  png_set_IHDR(png, writer.info, static_cast<png_uint_32>(image.width_px()),
               static_cast<png_uint_32>(image.height_px()), 8, PNG_COLOR_TYPE_RGB,
               PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
  png_set_filter(png, PNG_FILTER_TYPE_BASE, row_filter(image));
  png_set_compression_level(png, kCompressionLevel);
  png_set_compression_buffer_size(png, kIdatBytes);
  png_write_info(png, writer.info);
  for (int y = 0; y < image.height_px(); ++y) png_write_row(png, image.row(y));
  png_write_end(png, nullptr);
  return true;
}

std::string size_text(const Image& image) {
  return std::to_string(image.width_px()) + " x " + std::to_string(image.height_px()) + " px";
}

}  // namespace

std::string encode_png(const Image& image, const std::string& destination) {
  if (image.width_px() == 0 || image.height_px() == 0) {
    throw OutputError::cannot_write(destination,
                                    "cannot encode an empty (" + size_text(image) + ") image as PNG");
  }
  Output out;
  PngWriter writer;
  writer.png = png_create_write_struct(PNG_LIBPNG_VER_STRING, &out, on_error, on_warning);
  if (writer.png != nullptr) writer.info = png_create_info_struct(writer.png);
  if (writer.info == nullptr) {
    throw OutputError::cannot_write(destination, "libpng could not start (out of memory)");
  }
  if (!write_rows(writer, image, out)) {
    throw OutputError::cannot_write(destination, "libpng could not encode the " + size_text(image) +
                                                     " image as PNG: " + out.message);
  }
  return std::move(out.bytes);
}

}  // namespace attnviz
