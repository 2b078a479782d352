// explain.html: the neuron view of one head as one self-contained page (issue 21) whose query is
// switched by clicking a query token. Data goes in as JSON in a <script type="application/json">
// block (script_json: "</script>" in a token cannot end it); the vanilla script builds the view
// with DOM elements and textContent only. No build step, no library, no request (CSP).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "analysis/neuron_view.hpp"

namespace attnviz {

/// What the page shows: the head's view at every query that has weights (nullopt for a query
/// whose every key is masked), the tokens, and which query opens first.
struct ExplainPage {
  std::string title;
  Tokens query_tokens, key_tokens;
  std::vector<std::optional<NeuronView>> views;  ///< one per query
  long first_query = 0;
};

/// The whole HTML document. The page stores each query's q, scores_raw, weights and mask and
/// the keys' k and v once (they do not depend on the query); the script multiplies them out for
/// display (q_d·k_jd, weight_j·v_j) exactly as explain.json lists them.
std::string explain_page_html(const ExplainPage& page);

}  // namespace attnviz
