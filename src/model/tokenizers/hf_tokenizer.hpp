// A Hugging Face tokenizer.json read into a Vocabulary: byte-level BPE ("model": {"type": "BPE"}
// pre-tokenized by ByteLevel alone (GPT-2's pattern) or by a Split on LLaMA 3's or Qwen 2's
// pattern followed by ByteLevel, with no normalizer or NFC) for the gpt2 tokenizer; SentencePiece-
// style BPE and WordPiece (hf_tokenizer_kinds) for the tokenizers library's own pipeline
// (tokenizer_hf). Every option that would change the ids and is not implemented is refused,
// naming what the file holds.
#pragma once

#include <string>

#include "model/tokenizers/vocabulary.hpp"

namespace attnviz {

/// Reads `path` (a tokenizer.json; io/json_file's reader, with no size limit). bos/eos come
/// from its post_processor's template (a BOS prepended to single sequences means add_bos).
/// SentencePiece-style BPE and WordPiece files are read by hf_pipeline_vocabulary (model
/// "hf-bpe", "hf-wordpiece"). Every added token, special or not, is split out of a text first.
/// Throws InputError naming the file: as read_json_file for a file that cannot be read or is
/// not JSON (with line and column); with the JSON pointer and the value for a member of the
/// wrong type, a model type other than BPE, a pre-tokenizer it cannot match exactly,
/// vocab/merges/added tokens that do not fit, or (InputError::unsupported_tokenizer, "pass
/// --token-ids") a feature the gpt2 tokenizer does not implement, truncation, or padding that
/// reaches one text (a Fixed length, pad_to_multiple_of). Members it does not know (top level,
/// model, pre-tokenizer), fuse_unk and an unk_token missing from the vocabulary become warnings.
Vocabulary vocabulary_from_tokenizer_json(const std::string& path);

}  // namespace attnviz
