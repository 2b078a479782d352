#include "model/ggml_products.hpp"

#include <algorithm>
#include <optional>

#include "core/split_product.hpp"
#include "model/formats/ggml_activations.hpp"
#include "model/formats/half_matmul.hpp"
#include "model/formats/quant_matmul.hpp"

namespace attnviz {

Projection ggml_projection(const WeightSource& weights, const std::string& name, long rows, long cols, long first, long count) {
  const std::optional<QuantRows> all = weights.quant_rows(name, rows, cols);
  if (!all) return {};
  const long used = count < 0 ? rows - first : count;
  if (quant_matmul_supports(all->type)) {
    const QuantRows w = quant_row_slice(*all, first, used);
    return [w](const Matrix& x, int threads) { return quant_matmul(x, w, quant_matmul_threads(threads, x.rows(), w)); };
  }
  if (all->type != GgmlType::F16 && all->type != GgmlType::BF16) return {};
  // Two bytes a value, no blocks.
  const QuantRows w{all->type, all->blocks + first * all->cols * 2, used, all->cols};
  return [w](const Matrix& x, int threads) { return half_matmul(x, w, quant_matmul_threads(threads, x.rows(), w)); };
}

std::string ggml_product_path(GgmlType type, bool quantized) {
  if (!quantized || type == GgmlType::F32) return "float32";
  if (type == GgmlType::F16) return "f16 activations, as llama.cpp";
  if (type == GgmlType::BF16) return "bf16 activations, as llama.cpp";
  if (!quant_matmul_supports(type)) return "float32 (no ggml product for this type here)";
  switch (activation_blocks_for(type)) {
    case ActivationBlocks::Q8_0: return "q8_0 activations, as llama.cpp";
    case ActivationBlocks::Q8_1: return "q8_1 activations, as llama.cpp";
    case ActivationBlocks::Q8_K: return "q8_K activations, as llama.cpp";
  }
  return "float32";
}

std::string matmul_description(const WeightSource& weights, const std::vector<ProductTensor>& tensors, bool quantized) {
  std::vector<GgmlType> types;
  for (const ProductTensor& t : tensors) {
    const std::optional<QuantRows> w = weights.quant_rows(t.name, t.rows, t.cols);
    if (w && std::find(types.begin(), types.end(), w->type) == types.end()) types.push_back(w->type);
  }
  if (std::all_of(types.begin(), types.end(), [](GgmlType t) { return t == GgmlType::F32; })) return "";
  std::string text;
  for (const GgmlType type : types)
    text += (text.empty() ? "" : "; ") + ggml_type_name(static_cast<std::uint32_t>(type)) + ": " + ggml_product_path(type, quantized);
  return text;
}

}  // namespace attnviz
