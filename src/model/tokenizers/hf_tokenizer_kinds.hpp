// The tokenizer.json kinds attnviz runs with the library's own pipeline (tokenizer_hf):
// SentencePiece-style BPE (Llama 2, Mistral, TinyLlama, Gemma: a Prepend "▁" + Replace " " → "▁"
// normalizer or a Metaspace pre-tokenizer, byte_fallback, merges by rank) and WordPiece (BERT:
// BertNormalizer, BertPreTokenizer, "##" continuations, [CLS] … [SEP] templates). Internal to
// model/; callers use vocabulary_from_tokenizer_json.
#pragma once

#include <string>

#include "io/json_reader.hpp"
#include "model/tokenizers/vocabulary.hpp"

namespace attnviz {

/// True when a tokenizer.json is one of these kinds: /model/type "WordPiece", or "BPE" with no
/// pre-tokenizer or a Metaspace one (byte-level BPE has a ByteLevel pre-tokenizer).
bool is_hf_pipeline_tokenizer(const JsonSettings& t);

/// The Vocabulary (model "hf-bpe" or "hf-wordpiece", its steps in vocab.hf) of tokenizer.json
/// `t`. Throws InputError naming the file and the JSON pointer for a member of the wrong type, a
/// merge or special token naming a piece the vocabulary lacks, an unk_token missing from it; and
/// (InputError::unsupported_tokenizer, "pass --token-ids") for a normalizer, pre-tokenizer,
/// post-processor or model option the pipeline does not implement, naming it.
Vocabulary hf_pipeline_vocabulary(const JsonSettings& t);

}  // namespace attnviz
