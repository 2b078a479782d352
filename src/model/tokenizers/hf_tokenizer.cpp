#include "model/tokenizers/hf_tokenizer.hpp"

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <unordered_map>

#include "core/error.hpp"
#include "core/utf8.hpp"
#include "io/json_file.hpp"
#include "io/json_reader.hpp"
#include "model/tokenizers/hf_tokenizer_kinds.hpp"
#include "model/tokenizers/hf_tokenizer_parts.hpp"
#include "model/tokenizers/tokenizer_hf.hpp"

namespace attnviz {

namespace {

using json = nlohmann::json;
using namespace hf_json;

// The Split patterns of the pre-tokenizers attnviz matches exactly (the tokenizer.json text of
// Meta's LLaMA 3 and Alibaba's Qwen 2 releases) with the model's ignore_merges, to
// tokenizer.ggml.pre names. LLaMA 3's pattern without ignore_merges is llama.cpp's smaug-bpe.
struct KnownSplit {
  const char* regex;
  bool ignore_merges;
  const char* pre;
};
const std::vector<KnownSplit>& known_splits() {
  static const char* const kLlama3 =
      R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
  static const char* const kQwen2 =
      R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
  static const std::vector<KnownSplit> splits = {
      {kLlama3, true, "llama3"}, {kLlama3, false, "smaug-bpe"}, {kQwen2, false, "qwen2"}};
  return splits;
}

constexpr const char* kSupportedPreTokenizers =
    "ByteLevel (GPT-2) and Split on LLaMA 3's or Qwen 2's pattern + ByteLevel";

// The ByteLevel step at `pointer`: its own regex (GPT-2's) on or off as `use_regex` says, and
// no space put before the text.
bool byte_level_matches(const JsonSettings& t, const std::string& pointer, bool use_regex) {
  if (t.text(pointer + "/type", "") != "ByteLevel" || t.flag(pointer + "/use_regex", true) != use_regex) return false;
  require_flag(t, pointer + "/add_prefix_space", false, "a space put before the text");
  return true;
}

// The tokenizer.ggml.pre name of /pre_tokenizer with the model's ignore_merges, or "" when
// attnviz has no exact match for it.
std::string pre_tokenizer_name(const JsonSettings& t, bool ignore_merges) {
  if (!optional_object(t, "/pre_tokenizer")) return "";
  if (t.text("/pre_tokenizer/type", "") == "ByteLevel")
    return byte_level_matches(t, "/pre_tokenizer", true) && !ignore_merges ? "gpt-2" : "";
  const json* steps = t.find("/pre_tokenizer/pretokenizers");
  if (t.text("/pre_tokenizer/type", "") != "Sequence" || !steps || !steps->is_array() || steps->size() != 2) return "";
  const std::string split = "/pre_tokenizer/pretokenizers/0";
  if (t.text(split + "/type", "") != "Split" || !byte_level_matches(t, "/pre_tokenizer/pretokenizers/1", false)) return "";
  if (t.text(split + "/behavior", "Isolated") != "Isolated") return "";
  require_flag(t, split + "/invert", false, "the pattern's matches dropped, the text between them kept");
  const std::string regex = t.text(split + "/pattern/Regex", "");
  for (const KnownSplit& known : known_splits())
    if (regex == known.regex && ignore_merges == known.ignore_merges) return known.pre;
  return "";
}

// /normalizer: none, or NFC (Qwen 2's), which tokenize applies before pre-tokenizing.
std::vector<HfNormalizerStep> nfc_or_none(const JsonSettings& t) {
  if (!optional_object(t, "/normalizer")) return {};
  const std::string type = t.text("/normalizer/type", "");
  if (type != "NFC") throw InputError::unsupported_tokenizer(t.file(), "normalizer \"" + type + "\" (/normalizer)", "none, NFC");
  HfNormalizerStep nfc;
  nfc.kind = HfNormalizerStep::Kind::Nfc;
  return {nfc};
}

// The BPE model's options that change ids, each held to the value GPT-2's, LLaMA 3's and
// Qwen 2's files give it (null or "" for the strings, null or 0 for dropout, false for the flag).
void require_plain_bpe(const JsonSettings& t) {
  for (const char* key : {"continuing_subword_prefix", "end_of_word_suffix"}) {
    const std::string pointer = std::string("/model/") + key;
    const std::string affix = t.text(pointer, "", JsonNull::Absent);
    if (!affix.empty())
      throw InputError::unsupported_tokenizer(t.file(), pointer + " \"" + affix + "\"", "null, \"\"");
  }
  const double dropout = t.number("/model/dropout", 0.0, JsonNull::Absent);
  if (dropout != 0.0)
    throw InputError::unsupported_tokenizer(t.file(), "/model/dropout " + t.find("/model/dropout")->dump() + " (BPE dropout)", "null, 0");
  require_flag(t, "/model/byte_fallback", false, "<0xXX> tokens for bytes missing from the vocabulary");
}

// The members attnviz reads or knows to leave ids alone, per object kind.
const std::set<std::string>& known_members(const std::string& kind) {
  static const std::map<std::string, std::set<std::string>> kKnown = {
      {"", {"version", "truncation", "padding", "added_tokens", "normalizer", "pre_tokenizer", "post_processor", "decoder", "model"}},
      {"model", {"type", "dropout", "unk_token", "continuing_subword_prefix", "end_of_word_suffix", "fuse_unk", "byte_fallback",
                 "ignore_merges", "vocab", "merges"}},
      {"ByteLevel", {"type", "add_prefix_space", "trim_offsets", "use_regex"}},
      {"Split", {"type", "pattern", "behavior", "invert"}},
      {"Sequence", {"type", "pretokenizers"}}};
  static const std::set<std::string> kNone;
  const auto it = kKnown.find(kind);
  return it == kKnown.end() ? kNone : it->second;
}

// Appends to `unknown` the pointers of the members of the object at `pointer` that `kind` does not have.
void unknown_members(const JsonSettings& t, const std::string& pointer, const std::string& kind, std::vector<std::string>& unknown) {
  const json* object = t.find(pointer, JsonNull::Absent);  // "" is the root
  if (!object || !object->is_object()) return;
  for (const auto& [member, value] : object->items())
    if (!known_members(kind).count(member)) unknown.push_back(pointer + "/" + member);
}

// One warning naming what the file holds that attnviz reads past: members it does not know
// (a newer tokenizers release may give them meaning), fuse_unk, and an unk_token missing from
// the vocabulary. Byte-level BPE has a piece for every byte, so no text meets the unknown
// token and neither changes ids; a member attnviz does not know might.
void warn_unread(const JsonSettings& t, const Vocabulary& vocab, std::vector<std::string>& warnings) {
  std::vector<std::string> unknown;
  unknown_members(t, "", "", unknown);
  unknown_members(t, "/model", "model", unknown);
  const std::string pre_type = t.text("/pre_tokenizer/type", "", JsonNull::Absent);
  unknown_members(t, "/pre_tokenizer", pre_type, unknown);
  if (const json* steps = t.find("/pre_tokenizer/pretokenizers", JsonNull::Absent); steps && steps->is_array())
    for (std::size_t i = 0; i < steps->size(); ++i) {
      const std::string at = "/pre_tokenizer/pretokenizers/" + std::to_string(i);
      unknown_members(t, at, t.text(at + "/type", ""), unknown);
    }
  if (!unknown.empty()) {
    std::string list;
    for (const std::string& pointer : unknown) list += (list.empty() ? "" : ", ") + pointer;
    warnings.push_back(t.file() + ": members attnviz does not know, ignored: " + list);
  }
  if (t.flag("/model/fuse_unk", false, JsonNull::Absent))
    warnings.push_back(t.file() + ": /model/fuse_unk true ignored (byte-level BPE has no unknown pieces to fuse)");
  const std::string unk = t.text("/model/unk_token", "", JsonNull::Absent);
  if (!unk.empty() && std::find(vocab.pieces.begin(), vocab.pieces.end(), unk) == vocab.pieces.end())
    warnings.push_back(t.file() + ": /model/unk_token \"" + unk + "\" is not in the vocabulary (Hugging Face would fail on a piece it lacks)");
}

// The token a post-processor puts before a single sequence (TemplateProcessing's "single":
// [{"SpecialToken": {"id": …}}, {"Sequence": {"id": "A"}}]), if any.
struct TemplateToken {
  std::string pointer;  ///< where its id is, for messages
  std::string piece;
};

// The TemplateToken of the post-processor at `at`. ByteLevel post-processing only moves
// offsets; a template of any other shape, or another processor, would add tokens attnviz does
// not, and is refused.
std::optional<TemplateToken> template_bos(const JsonSettings& t, const std::string& at) {
  if (!optional_object(t, at)) return std::nullopt;
  const std::string type = t.text(at + "/type", "");
  if (type == "ByteLevel") return std::nullopt;
  if (type == "Sequence") {
    const json* steps = t.find(at + "/processors");
    if (!steps || !steps->is_array()) throw InputError::bad_value(t.file(), at + "/processors", "a list of processors", steps ? describe_json(*steps) : "nothing");
    std::optional<TemplateToken> bos;
    for (std::size_t i = 0; i < steps->size(); ++i)
      if (auto step_bos = template_bos(t, at + "/processors/" + std::to_string(i))) bos = step_bos;
    return bos;
  }
  const std::string supported = "ByteLevel, TemplateProcessing with at most one token before the text";
  if (type != "TemplateProcessing")
    throw InputError::unsupported_tokenizer(t.file(), "post-processor \"" + type + "\" (" + at + ")", supported);
  const json* single = t.find(at + "/single");
  if (!single || !single->is_array()) throw InputError::bad_value(t.file(), at + "/single", "a template (a list)", single ? describe_json(*single) : "nothing");
  const bool with_bos = single->size() == 2;
  const std::string sequence = at + "/single/" + (with_bos ? "1" : "0");
  if (single->size() > 2 || single->empty() || t.text(sequence + "/Sequence/id", "") != "A")
    throw InputError::unsupported_tokenizer(t.file(), "the template " + at + "/single " + single->dump(), supported);
  if (!with_bos) return std::nullopt;
  const std::string bos = at + "/single/0/SpecialToken/id";
  if (!t.find(bos)) throw InputError::unsupported_tokenizer(t.file(), "the template " + at + "/single " + single->dump(), supported);
  return TemplateToken{bos, t.text(bos, "")};
}

}  // namespace

Vocabulary vocabulary_from_tokenizer_json(const std::string& path) {
  const json root = read_json_file(path);  // no memory budget: tokenizer.json files run to tens of MB
  const JsonSettings t(root, path);
  require_library_accepts(t);
  const json* model = t.find("/model");
  if (!model || !model->is_object())
    throw InputError::bad_value(path, "/model", "the tokenizer model (an object)", model ? describe_json(*model) : "nothing");
  // GPT-2's own tokenizer.json has no "type": Hugging Face then reads it as the first model
  // kind whose fields it has, BPE when there are merges.
  const std::string type = t.text("/model/type", t.find("/model/merges") ? "BPE" : "");
  if (is_hf_pipeline_tokenizer(t)) return hf_pipeline_vocabulary(t);
  if (type != "BPE")
    throw InputError::bad_value(path, "/model/type", "\"BPE\" or \"WordPiece\" (pass --token-ids for other tokenizers)",
                                "\"" + type + "\"");
  require_plain_bpe(t);
  require_no_length_change(t);
  Vocabulary vocab;
  vocab.source = path;
  vocab.model = "gpt2";
  vocab.hf.normalizer = nfc_or_none(t);
  const bool ignore_merges = t.flag("/model/ignore_merges", false, JsonNull::Absent);
  vocab.pre = pre_tokenizer_name(t, ignore_merges);
  if (vocab.pre.empty() && ignore_merges && !pre_tokenizer_name(t, false).empty())
    throw InputError::unsupported_tokenizer(path, "/model/ignore_merges true with this pre-tokenizer", "false");
  if (vocab.pre.empty())
    throw InputError::inconsistent(path, std::string("/pre_tokenizer: only ") + kSupportedPreTokenizers + " are supported; pass --token-ids");
  // The library splits every added token, special or not, out of the text first; a normalized
  // one is looked for as the normalizer writes it.
  vocab.hf_added_tokens = true;
  set_added_patterns(t, read_vocab_table(t, vocab),
                     [&vocab](const std::string& content) { return encode_utf8(hf_normalize(vocab.hf.normalizer, decode_utf8(content)).text); },
                     vocab.hf, vocab.warnings);
  const json* merges = t.find("/model/merges");
  if (!merges || !merges->is_array()) throw InputError::missing_field(path, "/model/merges", "the BPE merges");
  for (const json& merge : *merges) {
    if (merge.is_string()) vocab.merges.push_back(merge.get<std::string>());
    else if (merge.is_array() && merge.size() == 2 && merge[0].is_string() && merge[1].is_string())
      vocab.merges.push_back(merge[0].get<std::string>() + " " + merge[1].get<std::string>());
    else throw InputError::bad_value(path, "/model/merges", "\"a b\" or [\"a\", \"b\"] pairs", merge.dump());
  }
  vocab.add_bos = false;
  vocab.add_space_prefix = false;
  if (const auto bos = template_bos(t, "/post_processor")) {
    for (std::size_t id = 0; id < vocab.pieces.size(); ++id)
      if (vocab.pieces[id] == bos->piece) vocab.bos = static_cast<std::int32_t>(id);
    if (!vocab.bos) throw InputError::bad_value(path, bos->pointer, "a token of the vocabulary", "\"" + bos->piece + "\"");
    vocab.add_bos = true;
  }
  warn_unread(t, vocab, vocab.warnings);
  return vocab;
}

}  // namespace attnviz
