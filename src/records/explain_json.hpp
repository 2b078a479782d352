// The explain format ("attnviz.explain" v1, docs/output-formats.md): one head at one query,
// every vector of its scores and output, and its circuits. Writing only; no maths.
#pragma once

#include <string>

#include "analysis/explanation.hpp"

namespace attnviz {

inline constexpr const char* kExplainFormatName = "attnviz.explain";
inline constexpr int kExplainFormatVersion = 1;

/// Serialises `e` as one JSON document (docs/output-formats.md "explain.json"): a masked key's
/// score is null, absent circuits (no W_O, no vocabulary) are null, eigenvalues are [re, im].
std::string explanation_to_json(const Explanation& e);

}  // namespace attnviz
