// The settings a census records (census.json's and the journal's `settings`) in one canonical
// form (issue 22): `--merge` and `--resume` compare them as strings, so two runs that did the
// same thing must record the same text whatever the user typed.
#pragma once

#include <string>

#include "model/model_run.hpp"

namespace attnviz {

/// `selection` as settings.layers records it: "all" when it holds every one of `num_layers`
/// layers (num_layers > 0; 0 = unknown, then only an empty selection is "all"), else its
/// ranges in order, "a" or "a-b", joined by commas: "3,1", "1,3", "1,1,3" and "1-1,3" are all
/// "1,3"; "1,2" is "1-2"; "0-4" of a 5-layer model is "all". Parse with parse_layer_selection.
std::string canonical_layers(const LayerSelection& selection, int num_layers);

/// settings.limit: `limit` when it left texts out (`cut`: a text came after the limit's last),
/// else -1, as for no --limit (`--limit 1000` over 20 texts runs the same 20).
long canonical_limit(long limit, bool cut);

}  // namespace attnviz
