// The LayerNorm after a post-LN block (BERT), as the forward pass hands it on with the block's
// attention (model/model_record's AttentionBlock) for the analyses that read it (analysis/alti).
#pragma once

#include "core/types.hpp"

namespace attnviz {

/// The affine map of a post-LN block's LayerNorm, LN(y) = γ ⊙ (y − mean(y)) / σ(y) + β,
/// σ(y) = sqrt(var(y) + ε). For post-LN models (BERT) ALTI applies its linear part, with σ taken
/// from the real y_i, to every T_i(x_j), and adds β with the bias (Ferrando et al. 2022, §3.1).
struct PostLayerNorm {
  Vector gamma;  ///< [d_out]
  Vector beta;   ///< [d_out]
  double epsilon = 1e-12;
};

}  // namespace attnviz
