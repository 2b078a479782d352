// `attnviz attribute --model MODEL (--text T | --token-ids …) [--target-id ID | --target TEXT]
// [--position P] -o DIR` (issue 20 §3): which heads push a decoder towards a token; on a
// CTranslate2 encoder-decoder (--text/--source-tokens the source, --target-tokens or the greedy
// translation the decoder's input), which heads push its decoder towards the next token. Checks the
// options against the model and the text before any computation, runs analysis/head_attribution,
// and writes DIR/attribution.json and DIR/attribution.png (.svg/.html with --format) at once.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "cli/model_job.hpp"
#include "cli/options.hpp"
#include "cli/profile.hpp"

namespace attnviz {

/// Runs the command; prints "wrote …" and the target with its logit to `out`. Throws UsageError
/// (exit 1, nothing written) for --target and --target-id together, a --target text that is not
/// one token (naming how it splits and suggesting --target-id), a --target-id outside the
/// vocabulary, a --position outside the text, --source-tokens/--target-tokens/--generate on a
/// decoder-only model, a post-norm encoder-decoder; LimitError when the
/// traced layer inputs would exceed the memory budget; as run_model for the model and the text.
void run_attribute(const Options& options, PhaseTimer& timer, std::ostream& out, std::vector<std::string>& warnings);

/// The target token of options.target (tokenized exactly as written: no BOS, no space prefix)
/// or options.target_id; nullopt when neither is given (the model's top prediction). Throws
/// UsageError as run_attribute says.
std::optional<std::int32_t> attribution_target(const Options& options, const DecoderRun& run);

}  // namespace attnviz
