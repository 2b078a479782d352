// Recognising a safetensors file (Hugging Face's format) from its first bytes: an 8-byte
// little-endian header length n, then an n-byte JSON header that starts with '{'.
#pragma once

#include <cstdint>
#include <string_view>

namespace attnviz {

/// True when `head` (a file's first bytes, at least 9 of them) begins as a safetensors file of
/// `file_bytes` bytes does: a header length n ≥ 2 that fits the file, then '{'. A JSON file's
/// first 8 bytes, read as that length, are far past its end.
bool looks_like_safetensors(std::string_view head, std::uint64_t file_bytes);

}  // namespace attnviz
