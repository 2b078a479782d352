// From a GGUF file to a runnable decoder: the architecture's settings read from its metadata
// (`<arch>.block_count`, `<arch>.attention.head_count`, …), and its tensors served to
// DecoderModel straight from the mapping, decoded one at a time. Architectures: those of
// model/families/ (llama, qwen2, qwen3, gemma2, gemma3, phi3, gpt2): the common keys are read
// here, the family's own (windows, caps, scales) by its gguf_settings.
#pragma once

#include <memory>
#include <string>

#include "model/decoder_model.hpp"
#include "model/formats/gguf_file.hpp"

namespace attnviz {

/// Architectures this build runs, for messages: "gemma2, gemma3, gpt2, llama, phi3, qwen2, qwen3".
std::string supported_gguf_architectures();

/// Reads the decoder settings of `file`'s general.architecture. Throws InputError naming the
/// architecture and the supported ones when it is not supported, or naming a missing or
/// inconsistent metadata key (heads not dividing d_model, kv heads not dividing heads…).
DecoderConfig decoder_config_from_gguf(const GgufFile& file);

/// A DecoderModel over `file` (kept alive by the model through a shared pointer), with
/// quantized matmul on: its Q8_0 weights multiply as llama.cpp's do (set_quantized_matmul).
DecoderModel decoder_from_gguf(std::shared_ptr<const GgufFile> file);

/// `file`'s tensors as a WeightSource (names as llama.cpp's; decoded one at a time), for the
/// models of other architectures (gguf_encoder).
std::unique_ptr<WeightSource> gguf_weight_source(std::shared_ptr<const GgufFile> file);

}  // namespace attnviz
