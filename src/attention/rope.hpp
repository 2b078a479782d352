// Rotary position embedding (RoPE; Su et al. 2021, "RoFormer", Eq. 34) applied to projected
// queries or keys, per head. Does not choose positions or settings (io/ and cli/ do).
#pragma once

#include <string>
#include <vector>

#include "core/types.hpp"

namespace attnviz {

/// Which dimensions of a head form a rotated pair.
enum class RopeStyle {
  Interleaved,  ///< pairs (2i, 2i+1): GPT-J, llama2.c, GGUF/llama.cpp "normal" ordering
  Half,         ///< pairs (i, i + rope_dim/2): GPT-NeoX, Hugging Face LLaMA (rotate_half)
};

/// RoPE parameters. dim == 0 means "all of d_k"; otherwise only the first `dim` dimensions of
/// each head rotate (partial rotary). Requires dim even and dim <= d_k (checked by io/, cli/).
struct RopeSettings {
  RopeStyle style = RopeStyle::Interleaved;
  double theta = 10000.0;
  long dim = 0;
  /// Linear position interpolation (Chen et al. 2023; llama.cpp's freq_scale, Hugging Face's
  /// rope_scaling {"type": "linear", "factor": f}): positions are multiplied by 1/f.
  double linear_factor = 1.0;
  /// Per-pair frequency divisors (LLaMA 3's rope_freqs / "llama3" rope_scaling): pair i turns
  /// at theta^(-2i/rope_dim) / frequency_factors[i]. Empty = all 1; else rope_dim/2 values.
  std::vector<double> frequency_factors;
};

/// LLaMA 3's frequency divisors (Hugging Face's _compute_llama3_parameters, llama.cpp's
/// rope_freqs): wavelengths shorter than original_context/high_freq_factor keep their
/// frequency, longer than original_context/low_freq_factor are divided by `factor`, and those
/// between are blended smoothly. Returns rope_dim/2 divisors.
std::vector<double> llama3_frequency_factors(double theta, long rope_dim, double factor, double low_freq_factor,
                                             double high_freq_factor, double original_context);

/// "interleaved" or "half".
std::string rope_style_name(RopeStyle style);

/// Rotates every head block [h·d_k, (h+1)·d_k) of x [n, heads·d_k] in place: pair i of
/// row r turns by the angle positions[r] / linear_factor · theta^(-2i/rope_dim) /
/// frequency_factors[i], i = 0 … rope_dim/2 − 1:
///   (a, b) -> (a·cos − b·sin, a·sin + b·cos).
/// At position 0 this is the identity; q·k after rotation depends only on the position
/// difference. Requires positions.size() == x.rows().
void apply_rope(Matrix& x, long d_k, const RopeSettings& settings,
                const std::vector<long long>& positions);

}  // namespace attnviz
