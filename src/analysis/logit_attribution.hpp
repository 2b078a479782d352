// Direct logit attribution (DLA; Elhage et al. 2021, "A Mathematical Framework for Transformer
// Circuits", §"Direct path"; TransformerLens's ActivationCache.logit_attrs with cached scales):
// the residual stream at a position is a sum of what wrote it, and with the final norm's
// statistic fixed at its real value the logit is linear in that sum, so each part's share is
//   dla(c) = ((c − centre·mean(c)) · s) ⊙ γ · u_t        (u_t: the target's unembedding row)
// and the final norm's bias contributes β · u_t. The shares add up to the logit exactly (in
// real arithmetic; here up to float32 rounding of the parts).
#pragma once

#include <optional>
#include <vector>

#include "core/types.hpp"
#include "model/residual_trace.hpp"

namespace attnviz {

/// Each part's share of one logit, in logit units. Σ of every field = the logit.
struct LogitAttribution {
  std::vector<std::vector<double>> heads;  ///< [layer][head]: head h's z^h W_O^h
  std::vector<double> mlp;                 ///< [layer]: the MLP's update less its output bias
  std::vector<double> attn_bias;           ///< [layer]: b_O
  std::vector<double> mlp_bias;            ///< [layer]: the MLP's output bias
  double embedding = 0;                    ///< the token embedding
  std::optional<double> position;          ///< a learned position embedding (absent for RoPE models)
  double final_norm_bias = 0;              ///< β · u_t (0 without a bias)

  /// Σ of every share, in double.
  double total() const;
};

/// The shares of `trace`'s parts in the logit of the token whose unembedding row is `u`
/// ([d_model]). Requires a trace filled by a forward pass (every layer traced) and u of d_model.
LogitAttribution direct_logit_attribution(const ResidualTrace& trace, const Vector& u);

/// The direction w [d_model] (float64) a part c is read along, dla(c) = c · w: w = s · γ ⊙ u,
/// centred (w − mean w) for a LayerNorm. For parts a ResidualTrace does not hold (an
/// encoder-decoder's cross-attention heads).
Eigen::VectorXd logit_direction(const FinalNormTrace& norm, const Vector& u);

/// The logit recomputed from the trace's whole residual: norm(final_residual) · u, in double.
/// What the shares of direct_logit_attribution must add up to.
double traced_logit(const ResidualTrace& trace, const Vector& u);

}  // namespace attnviz
