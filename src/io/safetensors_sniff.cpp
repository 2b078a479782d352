#include "io/safetensors_sniff.hpp"

namespace attnviz {

bool looks_like_safetensors(std::string_view head, std::uint64_t file_bytes) {
  if (head.size() < 9 || file_bytes < 10 || head[8] != '{') return false;
  std::uint64_t n = 0;  // little-endian, whatever this machine's order
  for (int i = 7; i >= 0; --i) n = (n << 8) | static_cast<unsigned char>(head[static_cast<std::size_t>(i)]);
  return n >= 2 && n <= file_bytes - 8;
}

}  // namespace attnviz
