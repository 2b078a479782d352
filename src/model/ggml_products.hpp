// The products of a GGUF model's forward pass as llama.cpp's CPU backend computes them, one per
// weight type (model/formats/quant_matmul), for the decoder and the BERT encoder alike, and the
// dump's account of which path each weight type took (model.matmul).
#pragma once

#include <string>
#include <vector>

#include "attention/attention.hpp"
#include "model/decoder_model.hpp"

namespace attnviz {

/// X·Wᵀ for rows [first, first + count) (count < 0: to the end) of the tensor `name` [rows, cols]
/// of `weights`, as llama.cpp computes it: quant_matmul for the block types it multiplies (q4_0 …
/// q8_0, the K-quants, iq4_nl, iq4_xs), and for f16 / bf16 weights the float32 product of the
/// activations rounded to float16 / bfloat16 with the decoded weights (each term exact, as in
/// ggml). Empty for f32 weights, for types with no ggml product here (iq1–iq3, tq: decoded and
/// multiplied in float32 by the caller) and for sources that do not store ggml blocks. `weights`
/// must outlive the Projection.
Projection ggml_projection(const WeightSource& weights, const std::string& name, long rows, long cols, long first = 0,
                           long count = -1);

/// What a product with a weight of `type` computes, for model.matmul: "q8_K activations, as
/// llama.cpp" (and q8_0, q8_1, f16, bf16), "float32" for f32 and whenever `quantized` is off,
/// "float32 (no ggml product for this type here)" for the rest.
std::string ggml_product_path(GgmlType type, bool quantized);

/// One product weight of a model: a tensor name and its [rows, cols].
struct ProductTensor {
  std::string name;
  long rows = 0;
  long cols = 0;
};

/// model.matmul for a model whose product weights are `tensors` (in forward order; missing ones
/// are skipped): "type: path" for each distinct type, in order of first use, joined by "; ";
/// "" when all are f32 or none is stored in ggml blocks.
std::string matmul_description(const WeightSource& weights, const std::vector<ProductTensor>& tensors, bool quantized);

}  // namespace attnviz
