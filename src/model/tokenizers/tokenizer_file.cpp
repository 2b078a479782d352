#include "model/tokenizers/tokenizer_file.hpp"

#include <filesystem>
#include <fstream>

#include "core/error.hpp"
#include "model/formats/gguf_file.hpp"
#include "model/tokenizers/hf_tokenizer.hpp"

namespace attnviz {

Vocabulary vocabulary_from_file(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw InputError::unreadable(path, "is a folder; --tokenizer takes a tokenizer.json or a GGUF file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError::unreadable(path, "cannot be opened (does it exist, and may it be read?)");
  char magic[4] = {};
  in.read(magic, 4);
  if (in.gcount() == 4 && std::string(magic, 4) == "GGUF") {
    const GgufFile file(path);
    if (!file.has("tokenizer.ggml.tokens"))
      throw InputError::missing_field(path, "tokenizer.ggml.tokens", "the vocabulary --tokenizer asks for");
    return vocabulary_from_gguf(file);
  }
  return vocabulary_from_tokenizer_json(path);
}

}  // namespace attnviz
