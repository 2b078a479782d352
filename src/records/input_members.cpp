#include "records/input_members.hpp"

#include <map>
#include <set>
#include <string_view>

#include "core/error.hpp"

namespace attnviz {

namespace {

// The members each role reads (docs/input-files.md), and the documented metadata that no role
// reads but that files carry for people (the bundled examples' provenance and the reference
// values their converters computed): neither is warned about.
const std::set<std::string> kSentenceMembers = {"tokens", "embeddings", "attention_mask", "positions", "model", "layer"};
const std::set<std::string> kWeightsMembers = {"num_heads", "num_kv_heads", "W_Q", "W_K", "W_V", "b_Q",
                                               "b_K", "b_V", "W_O", "b_O", "scale", "rope",
                                               "rope_scaling", "causal", "attention", "model", "layer"};
const std::set<std::string> kMetadataMembers = {"description", "source", "licence", "license",
                                                "sentence", "source_sentence", "target_output_tokens"};
constexpr std::string_view kMetadataPrefix = "reference_";

// Members other tools write that would change the attention if attnviz read them: refused,
// with what to write instead, since a picture without them is not the layer's attention.
const std::map<std::string, std::string> kRefusedMembers = {
    {"is_causal", "attnviz reads \"causal\": true or false"},
    {"rope_theta", "attnviz reads RoPE settings from the \"rope\" block: {\"style\", \"theta\", \"dim\"}"},
    {"sliding_window", "sliding-window attention is not implemented"},
    {"attn_logit_softcapping", "logit soft-capping is not implemented"},
    {"alibi", "ALiBi is not implemented"},
    {"alibi_slopes", "ALiBi is not implemented"},
    {"attn_mask", "an explicit mask is not read: use the sentence file's attention_mask (padding) or causal"},
    {"mask", "an explicit mask is not read: use the sentence file's attention_mask (padding) or causal"},
    {"causal_mask", "attnviz reads \"causal\": true or false (or give --causal / --no-causal)"},
    {"key_padding_mask",
     "attnviz reads the sentence file's \"attention_mask\", with the opposite polarity: PyTorch's "
     "key_padding_mask is true for padding, attention_mask is 1 for tokens to attend to (attention_mask = "
     "1 - key_padding_mask)"},
    {"softmax_scale", "attnviz reads \"scale\" (the factor on Q K^T, default 1/sqrt(d_k))"},
    {"partial_rotary_factor", "attnviz reads the rotated width as the \"rope\" block's \"dim\" (d_k x the factor)"},
    {"rotary_dim", "attnviz reads the rotated width as the \"rope\" block's \"dim\""},
    {"num_key_value_heads", "attnviz reads \"num_kv_heads\""},
    {"head_dim", "attnviz takes d_k from W_Q's width divided by num_heads"},
};

std::string pointer_list(const std::vector<std::string>& keys) {
  std::string list;
  for (const std::string& key : keys) list += (list.empty() ? "/" : ", /") + key;
  return list;
}

}  // namespace

std::string unread_members_warning(const std::string& file, const InputFileRoles& roles, const std::string& other_file) {
  std::vector<std::string> other_role, unknown;
  for (const std::string& key : roles.members) {
    if (const auto refused = kRefusedMembers.find(key); refused != kRefusedMembers.end())
      throw InputError::inconsistent(file, "/" + key + ": would change the attention, but " + refused->second +
                                               " (refused rather than ignored)");
    const bool read = (roles.sentence && kSentenceMembers.count(key) != 0) ||
                      (roles.weights && kWeightsMembers.count(key) != 0);
    if (read || kMetadataMembers.count(key) != 0 || key.rfind(kMetadataPrefix, 0) == 0) continue;
    (kSentenceMembers.count(key) != 0 || kWeightsMembers.count(key) != 0 ? other_role : unknown).push_back(key);
  }
  std::string text;
  if (!unknown.empty())
    text += "ignoring " + pointer_list(unknown) + ": not " + (unknown.size() == 1 ? "a field" : "fields") +
            " of attnviz's input files (docs/input-files.md lists them)";
  if (!other_role.empty()) {
    text += std::string(text.empty() ? "" : "; ") + "not using " + pointer_list(other_role) + ": this file is read as " +
            (roles.weights ? "the weights file (" : "a sentence file (") + other_file + ")";
  }
  return text.empty() ? text : file + ": " + text;
}

}  // namespace attnviz
