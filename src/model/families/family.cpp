#include "model/families/family.hpp"

#include <algorithm>
#include <set>

namespace attnviz {

const std::vector<const DecoderFamily*>& decoder_families() {
  static const std::vector<const DecoderFamily*> all = {&llama_family(),  &mistral_family(), &qwen2_family(), &qwen3_family(),
                                                        &gemma2_family(), &gemma3_family(),  &phi3_family(),  &gpt2_family(),
                                                        &olmo2_family(),  &smollm3_family(), &granite_family()};
  return all;
}

const DecoderFamily* family_for_gguf(std::string_view architecture) {
  for (const DecoderFamily* f : decoder_families())
    if (!f->gguf_architecture.empty() && f->gguf_architecture == architecture) return f;
  return nullptr;
}

const DecoderFamily* family_for_hf(std::string_view architecture) {
  for (const DecoderFamily* f : decoder_families())
    if (!f->hf_architecture.empty() && f->hf_architecture == architecture) return f;
  return nullptr;
}

namespace {
std::string joined(std::set<std::string> names) {
  std::string text;
  for (const std::string& n : names)
    if (!n.empty()) text += (text.empty() ? "" : ", ") + n;
  return text;
}
}  // namespace

std::string gguf_family_list() {
  std::set<std::string> names;
  for (const DecoderFamily* f : decoder_families()) names.insert(f->gguf_architecture);
  return joined(names);
}

std::string hf_family_list() {
  std::set<std::string> names;
  for (const DecoderFamily* f : decoder_families()) names.insert(f->hf_architecture);
  return joined(names);
}

}  // namespace attnviz
