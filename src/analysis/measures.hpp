// --measure (issue 20 §1): from what the engine hands on per block (weights, head value vectors,
// the residual entering the block) to a record's `norms`, `value_norms`, `layer_norms` or
// `alti`, for single layers and models alike; and the checks that say which blocks ALTI can
// read. The maths is in analysis/ (value_norms, alti).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "analysis/alti.hpp"
#include "attention/attention.hpp"
#include "attention/attention_record.hpp"
#include "core/types.hpp"

namespace attnviz {

/// The one warning of a model run under --measure alti that has cross-attention blocks.
inline constexpr const char* kNoCrossAlti =
    "--measure alti: cross-attention blocks have no ALTI (it needs the residual stream of a self-attention block); "
    "they keep their weights";

/// Whether `measure` ("weights", "norms", "alti") needs the head value vectors f^h(x_j).
bool measure_needs_value_vectors(const std::string& measure);

/// Whether a single-layer run under `measure` needs f^h(x_j) itself: ALTI, and norms for `dump`
/// (its layer_norms mixes the heads). Every picture of norms reads ‖f^h(x_j)‖ alone
/// (add_head_norms), which skips the n_k × d_out product per head.
bool measure_needs_head_products(const std::string& measure, bool dump);

/// record.norms and record.value_norms (layer_norms left empty) of a layer from its key/value
/// input x_kv [n_k, d_model] and record.weights: V = X_kv·W_V + b_V, then ‖f^h(x_j)‖ through
/// W_O^h's Gram matrix (head_value_norms). Returns false, record untouched, when V or a norm
/// overflows float32.
bool add_head_norms(const AttentionLayer& layer, const Matrix& x_kv, AttentionRecord& record);

/// What ALTI needs from one block: the residual r entering it [n, d_out] and b_O; a post-LN
/// block's LayerNorm (nullopt for pre-LN and plain layers).
struct AltiInputs {
  const Matrix* residual = nullptr;
  Vector b_o;
  std::optional<PostLayerNorm> post_norm;
};

/// Fills record.norms/value_norms/layer_norms (measure "norms") or record.alti ("alti") from
/// record.weights and value_vectors (h × [n_k, d_out]); nothing for "weights".
/// Requires for "alti": inputs.residual set and a self-attention record (checked by the caller).
/// Without `layer_norms` (pictures: only a dump writes them) record.layer_norms stays empty.
void add_measure(const std::string& measure, const std::vector<Matrix>& value_vectors, const AltiInputs& inputs,
                 AttentionRecord& record, bool layer_norms = true);

/// The weights a picture of `record` under `measure` shows as a distribution per row (overview,
/// rollout, census): the weights, or for norms each head's N with rows normalised to sum 1.
/// ALTI has no heads: the weights.
std::vector<Matrix> measure_distributions(const std::string& measure, const AttentionRecord& record);

/// " · norms ‖α·f(x)‖, each row normalised to sum 1" or " · ALTI contributions …": what a
/// figure title adds for --measure; "" for weights.
std::string measure_title_note(const std::string& measure);

/// compare --measure: the record's weights become what compare reads as distributions — each
/// head's N with rows normalised (norms), or the one ALTI map as a single panel named "ALTI"
/// (`names` set to it). Throws InputError naming the file and field when the record lacks the
/// measure (a dump written without it). Nothing for "weights".
void compare_measure(const std::string& measure, AttentionRecord& record, std::vector<std::string>& names);

}  // namespace attnviz
