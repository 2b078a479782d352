#include "model/model_record.hpp"

#include <algorithm>

#include <cassert>

namespace attnviz {

const std::vector<BlockName>& block_names() {
  static const std::vector<BlockName> names = {{"enc", "encoder", "self", "encoder self-attention"},
                                               {"dec", "decoder", "self", "decoder self-attention"},
                                               {"cross", "decoder", "cross", "decoder cross-attention"}};
  return names;
}

std::string block_name(const std::string& stack, const std::string& kind) {
  for (const BlockName& b : block_names())
    if (stack == b.stack && kind == b.kind) return b.name;
  assert(false && "a block is encoder self, decoder self or decoder cross");
  return "";
}

std::string block_description(const std::string& block) {
  for (const BlockName& b : block_names())
    if (block == b.name) return b.description;
  return block;
}

std::string model_head_name(const std::string& block, int layer, int head) {
  return (block.empty() ? "" : block + ".") + "L" + std::to_string(layer) + "H" + std::to_string(head);
}

std::string AttentionBlock::block_name() const {
  return encoder_decoder ? attnviz::block_name(stack, kind) : "";
}

std::string AttentionBlock::head_name(int head) const { return model_head_name(block_name(), layer, head); }

ActivationWants ActivationWants::of(const std::vector<std::string>& names) {
  ActivationWants w;
  const auto has = [&](const char* name) { return std::find(names.begin(), names.end(), name) != names.end(); };
  w.resid_pre = has("resid_pre");
  w.resid_mid = has("resid_mid");
  w.resid_post = has("resid_post");
  w.attn_out = has("attn_out");
  w.mlp_out = has("mlp_out");
  return w;
}

}  // namespace attnviz
