// GELU as llama.cpp's CPU backend computes it (ggml_vec_gelu_f32 with GGML_GELU_FP16): x ≤ −10
// gives 0, x ≥ 10 gives x, otherwise x is rounded to float16 and looked up in a table of the tanh
// GELU of every float16 value (0.5·x·(1 + tanh(√(2/π)·x·(1 + 0.044715·x²))) in float32), each
// entry rounded to float16. Source (read, not copied): ggml-cpu's vec.h and ggml_table_gelu_f16.
#pragma once

#include "core/types.hpp"

namespace attnviz {

/// ggml's GELU of every element of x (any shape): the float16 table above.
Matrix gelu_ggml(const Matrix& x);

/// The same for one value.
float gelu_ggml(float x);

}  // namespace attnviz
