// `attnviz explain`: one head at one query, from a layer JSON or a whole model — the neuron
// view (explain.json, explain.png) and the QK/OV circuits (circuits.png). Sequences calls
// into analysis/, io/ and render/; computes nothing itself.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

#include "cli/options.hpp"
#include "cli/profile.hpp"

namespace attnviz {

/// --head as given: a head of a single layer ("3" or "H3": layer = -1) or of a model ("L2H5",
/// and for encoder-decoder models "enc.L2H5", "dec.L2H5", "cross.L2H5"). Throws UsageError
/// naming --head, what was given and the forms for this kind of run.
LayerHead parse_explain_head(const std::string& text, bool model);

/// Runs `explain`: writes DIR/explain.json, DIR/explain.png (and .svg/.html with --format) and
/// DIR/circuits.png, all or nothing. Throws UsageError for a --head or --query out of range (or
/// a query whose every key is masked), and whatever loading the inputs throws.
void run_explain(const Options& options, PhaseTimer& timer, std::ostream& out, std::vector<std::string>& warnings);

}  // namespace attnviz
