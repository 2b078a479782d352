// Consumers that take a model's attention one head at a time (issue 23: 8192 tokens in 1 GiB):
// the forward pass of a decoder hands them each head as it is computed (run_model's HeadSink);
// blocks that come whole (encoders, CTranslate2 models, --measure norms|alti) are cut into heads
// here, so a consumer has one code path.
#pragma once

#include "model/model_run.hpp"

namespace attnviz {

/// A BlockSink for run_model beside `heads`: a block that arrives with its weights is handed to
/// `heads` head by head (its weights let go as it goes) and then, without weights, to `done`;
/// a block that arrives without them (its heads were streamed) goes straight to `done`. Both
/// references must outlive the sink.
BlockSink split_heads(const HeadSink& heads, const BlockSink& done);

}  // namespace attnviz
