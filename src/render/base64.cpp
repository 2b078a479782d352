#include "render/base64.hpp"

namespace attnviz {

namespace {

constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
constexpr unsigned kSixBits = 63;

}  // namespace

std::string base64_encode(std::string_view bytes) {
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  // Each 3 bytes become 4 characters of 6 bits; a short last group is padded with '='.
  for (std::size_t i = 0; i < bytes.size(); i += 3) {
    const auto byte = [&](std::size_t k) { return k < bytes.size() ? static_cast<unsigned char>(bytes[k]) : 0u; };
    const unsigned group = (byte(i) << 16) | (byte(i + 1) << 8) | byte(i + 2);
    out += kAlphabet[(group >> 18) & kSixBits];
    out += kAlphabet[(group >> 12) & kSixBits];
    out += i + 1 < bytes.size() ? kAlphabet[(group >> 6) & kSixBits] : '=';
    out += i + 2 < bytes.size() ? kAlphabet[group & kSixBits] : '=';
  }
  return out;
}

}  // namespace attnviz
