// From a GGUF file of llama.cpp's architecture "bert" to a runnable EncoderModel: the settings
// from `bert.*` metadata (as llama.cpp's LLM_ARCH_BERT loads them), the tensors served from the
// mapping one at a time.
#pragma once

#include <memory>
#include <string>

#include "model/encoder_model.hpp"
#include "model/formats/gguf_file.hpp"

namespace attnviz {

/// True when `file` names an encoder architecture this build runs ("bert").
bool is_gguf_encoder(const GgufFile& file);

/// The EncoderModel of `file`: bert.block_count, embedding_length, feed_forward_length,
/// attention.head_count, attention.layer_norm_epsilon, context_length; token types from
/// tokenizer.ggml.token_type_count (llama.cpp's default 2); GELU as llama.cpp computes it
/// (tanh). Throws InputError naming a missing or inconsistent key (head_count not dividing
/// embedding_length, attention.causal true, a pooling or key attnviz does not apply) or, from
/// EncoderModel, a missing tensor with the family.
EncoderModel encoder_from_gguf(std::shared_ptr<const GgufFile> file);

}  // namespace attnviz
