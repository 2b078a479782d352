#include "cli/head_stream.hpp"

#include <utility>
#include <vector>

namespace attnviz {

BlockSink split_heads(const HeadSink& heads, const BlockSink& done) {
  return [&heads, &done](AttentionBlock&& block) {
    std::vector<Matrix> weights = std::move(block.record.weights);
    block.record.weights.clear();
    for (std::size_t h = 0; h < weights.size(); ++h) {
      heads(block, static_cast<int>(h), weights[h]);
      weights[h] = Matrix();
    }
    done(std::move(block));
  };
}

}  // namespace attnviz
