// The tokenizer a user names with --tokenizer FILE (issue 34 §2): a Hugging Face tokenizer.json,
// or a GGUF file whose vocabulary to use, told apart by the file's first bytes.
#pragma once

#include <string>

#include "model/tokenizers/vocabulary.hpp"

namespace attnviz {

/// The vocabulary of `path`: vocabulary_from_gguf when the file starts with "GGUF" (its
/// tokenizer.ggml.* keys; InputError naming the file when it has none), else
/// vocabulary_from_tokenizer_json. Throws InputError for a file that cannot be read or is a
/// folder, and as those readers.
Vocabulary vocabulary_from_file(const std::string& path);

}  // namespace attnviz
