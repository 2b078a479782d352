// A Hugging Face tokenizer.json read into a Vocabulary, for the kinds the gpt2 tokenizer
// already implements exactly: byte-level BPE ("model": {"type": "BPE"}) pre-tokenized by
// ByteLevel alone (GPT-2's pattern) or by a Split on LLaMA 3's or Qwen 2's pattern followed by
// ByteLevel, with no normalizer or NFC. Others, and every option that would change the ids
// (a prefix space, byte fallback, dropout, affixes, added-token matching, other templates),
// are refused, naming what the file holds.
#pragma once

#include <string>

#include "model/vocabulary.hpp"

namespace attnviz {

/// Reads `path` (a tokenizer.json; io/json_file's reader, with no size limit). bos/eos come
/// from its post_processor's template (a BOS prepended to single sequences means add_bos).
/// Throws InputError naming the file: as read_json_file for a file that cannot be read or is
/// not JSON (with line and column); with the JSON pointer and the value for a member of the
/// wrong type, a model type other than BPE, a pre-tokenizer it cannot match exactly,
/// vocab/merges/added tokens that do not fit, or (InputError::unsupported_tokenizer, "pass
/// --token-ids") a feature the gpt2 tokenizer does not implement, truncation, or padding that
/// reaches one text (a Fixed length, pad_to_multiple_of). Members it does not know (top level,
/// model, pre-tokenizer), fuse_unk and an unk_token missing from the vocabulary become warnings.
Vocabulary vocabulary_from_tokenizer_json(const std::string& path);

}  // namespace attnviz
