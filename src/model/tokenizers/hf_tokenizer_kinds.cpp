#include "model/tokenizers/hf_tokenizer_kinds.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <set>
#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "core/utf8.hpp"
#include "model/tokenizers/hf_tokenizer_parts.hpp"
#include "model/tokenizers/tokenizer_hf.hpp"

namespace attnviz {

namespace {

using json = nlohmann::json;
using namespace hf_json;

constexpr const char* kNormalizers = "Prepend, Replace of a String, NFC, NFD, NFKC, NFKD, Lowercase, BertNormalizer, a Sequence of them";
constexpr const char* kPreTokenizers = "Metaspace, BertPreTokenizer, a Sequence of them";
constexpr const char* kPostProcessors = "TemplateProcessing, BertProcessing, ByteLevel, a Sequence of them";

// A member the library's deserializer requires (no serde default): refused when absent.
const json& required(const JsonSettings& t, const std::string& pointer, const std::string& what) {
  const json* value = t.find(pointer);
  if (!value) throw InputError::missing_field(t.file(), pointer, what + "; the tokenizers library refuses the file without it");
  return *value;
}

HfNormalizerStep normalizer_step(const JsonSettings& t, const std::string& at) {
  using Kind = HfNormalizerStep::Kind;
  const std::string type = t.text(at + "/type", "");
  HfNormalizerStep step;
  if (type == "Prepend") {
    step.kind = Kind::Prepend;
    step.content = read_string(required(t, at + "/prepend", "the text put before"), t.file(), at + "/prepend");
  } else if (type == "Replace") {
    step.kind = Kind::Replace;
    if (t.find(at + "/pattern/Regex"))
      throw InputError::unsupported_tokenizer(t.file(), "a Regex pattern (" + at + "/pattern/Regex)", "a String pattern");
    if (!t.find(at + "/pattern/String")) throw InputError::missing_field(t.file(), at + "/pattern/String", "the text replaced");
    step.pattern = t.text(at + "/pattern/String", "");
    step.content = read_string(required(t, at + "/content", "what replaces the pattern"), t.file(), at + "/content");
  } else if (type == "NFC" || type == "NFD" || type == "NFKC" || type == "NFKD" || type == "Lowercase") {
    step.kind = type == "NFC" ? Kind::Nfc : type == "NFD" ? Kind::Nfd : type == "NFKC" ? Kind::Nfkc : type == "NFKD" ? Kind::Nfkd : Kind::Lowercase;
  } else if (type == "BertNormalizer") {
    step.kind = Kind::Bert;
    const auto option = [&](const char* name) {
      const std::string pointer = at + "/" + name;
      return read_bool(required(t, pointer, "true or false"), t.file(), pointer);
    };
    step.clean_text = option("clean_text");
    step.handle_chinese_chars = option("handle_chinese_chars");
    step.lowercase = option("lowercase");
    step.strip_accents = t.flag(at + "/strip_accents", step.lowercase, JsonNull::Absent);  // null: as lowercase
  } else {
    throw InputError::unsupported_tokenizer(t.file(), "normalizer \"" + type + "\" (" + at + ")", kNormalizers);
  }
  return step;
}

HfPreTokenizerStep pre_tokenizer_step(const JsonSettings& t, const std::string& at) {
  const std::string type = t.text(at + "/type", "");
  if (type == "Metaspace") return metaspace_step(t, at);
  if (type != "BertPreTokenizer") throw InputError::unsupported_tokenizer(t.file(), "pre-tokenizer \"" + type + "\" (" + at + ")", kPreTokenizers);
  HfPreTokenizerStep step;
  step.kind = HfPreTokenizerStep::Kind::Bert;
  return step;
}

// The id of special token `name` of a TemplateProcessing (its special_tokens entry holds the ids).
std::vector<std::int32_t> template_ids(const JsonSettings& t, const std::string& at, const std::string& name) {
  const std::string pointer = at + "/special_tokens/" + pointer_token(name) + "/ids";
  const json* ids = t.find(pointer);
  if (!ids || !ids->is_array()) throw InputError::bad_value(t.file(), pointer, "the token's ids (a list)", ids ? describe_json(*ids) : "nothing");
  std::vector<std::int32_t> out;
  for (std::size_t i = 0; i < ids->size(); ++i)
    out.push_back(static_cast<std::int32_t>(read_integer((*ids)[i], t.file(), pointer + "/" + std::to_string(i), 0, (1 << 24) - 1)));
  return out;
}

// The ids a post-processor puts before and after one text.
void read_post_processor(const JsonSettings& t, HfPipeline& hf) {
  for (const std::string& at : step_pointers(t, "/post_processor", "processors")) {
    const std::string type = t.text(at + "/type", "");
    if (type == "ByteLevel") continue;  // moves offsets only
    if (type == "BertProcessing") {
      for (const auto& [key, side] : {std::pair<const char*, std::vector<std::int32_t>*>{"cls", &hf.prefix}, {"sep", &hf.suffix}}) {
        const std::string pointer = at + "/" + key + "/1";
        const json* id = t.find(pointer);
        if (!id) throw InputError::missing_field(t.file(), pointer, std::string("the id of the ") + key + " token");
        side->push_back(static_cast<std::int32_t>(read_integer(*id, t.file(), pointer, 0, (1 << 24) - 1)));
      }
      continue;
    }
    if (type != "TemplateProcessing")
      throw InputError::unsupported_tokenizer(t.file(), "post-processor \"" + type + "\" (" + at + ")", kPostProcessors);
    const json* single = t.find(at + "/single");
    if (!single || !single->is_array()) throw InputError::bad_value(t.file(), at + "/single", "a template (a list)", single ? describe_json(*single) : "nothing");
    bool sequence = false;
    for (std::size_t i = 0; i < single->size(); ++i) {
      const std::string item = at + "/single/" + std::to_string(i);
      if (t.find(item + "/Sequence")) {
        if (sequence || t.text(item + "/Sequence/id", "") != "A")
          throw InputError::unsupported_tokenizer(t.file(), "the template " + at + "/single " + single->dump(), "one Sequence A between special tokens");
        sequence = true;
        continue;
      }
      if (!t.find(item + "/SpecialToken/id"))
        throw InputError::bad_value(t.file(), item, "{\"SpecialToken\": …} or {\"Sequence\": …}", describe_json((*single)[i]));
      const std::vector<std::int32_t> ids = template_ids(t, at, t.text(item + "/SpecialToken/id", ""));
      std::vector<std::int32_t>& side = sequence ? hf.suffix : hf.prefix;
      side.insert(side.end(), ids.begin(), ids.end());
    }
    if (!sequence) throw InputError::unsupported_tokenizer(t.file(), "the template " + at + "/single " + single->dump(), "one Sequence A between special tokens");
  }
}

// BPE's merges by rank: ("a", "b") -> (rank, id of "ab"); each piece must be in the vocabulary,
// as the library requires when it loads the file.
void read_merges(const JsonSettings& t, const std::unordered_map<std::string, std::int32_t>& ids, HfPipeline& hf) {
  const json* merges = t.find("/model/merges");
  if (!merges || !merges->is_array()) throw InputError::missing_field(t.file(), "/model/merges", "the BPE merges");
  for (std::size_t i = 0; i < merges->size(); ++i) {
    const json& merge = (*merges)[i];
    const std::string at = "/model/merges/" + std::to_string(i);
    std::string left, right;
    if (merge.is_string()) {
      const std::string text = merge.get<std::string>();
      const std::size_t space = text.find(' ');
      if (space == std::string::npos) throw InputError::bad_value(t.file(), at, "\"a b\" or [\"a\", \"b\"]", merge.dump());
      left = text.substr(0, space);
      right = text.substr(space + 1);
    } else if (merge.is_array() && merge.size() == 2 && merge[0].is_string() && merge[1].is_string()) {
      left = merge[0].get<std::string>();
      right = merge[1].get<std::string>();
    } else {
      throw InputError::bad_value(t.file(), at, "\"a b\" or [\"a\", \"b\"]", merge.dump());
    }
    std::int32_t part_ids[3];
    const std::string parts[3] = {left, right, left + right};
    for (int p = 0; p < 3; ++p) {
      const auto it = ids.find(parts[p]);
      if (it == ids.end()) throw InputError::inconsistent(t.file(), at + ": " + quoted_piece(parts[p]) + " is not in the vocabulary");
      part_ids[p] = it->second;
    }
    const std::uint64_t key = (static_cast<std::uint64_t>(static_cast<std::uint32_t>(part_ids[0])) << 32) | static_cast<std::uint32_t>(part_ids[1]);
    hf.merges.emplace(key, std::make_pair(static_cast<std::int32_t>(i), part_ids[2]));  // the first of duplicates wins
  }
}

// The BPE options the pipeline implements; the rest held to their inert values.
void read_bpe_options(const JsonSettings& t, HfPipeline& hf) {
  for (const char* key : {"continuing_subword_prefix", "end_of_word_suffix"}) {
    const std::string pointer = std::string("/model/") + key;
    const std::string affix = t.text(pointer, "", JsonNull::Absent);
    if (!affix.empty()) throw InputError::unsupported_tokenizer(t.file(), pointer + " \"" + affix + "\"", "null, \"\"");
  }
  const double dropout = t.number("/model/dropout", 0.0, JsonNull::Absent);
  if (dropout != 0.0)
    throw InputError::unsupported_tokenizer(t.file(), "/model/dropout " + t.find("/model/dropout")->dump() + " (BPE dropout)", "null, 0");
  hf.byte_fallback = t.flag("/model/byte_fallback", false, JsonNull::Absent);
  hf.fuse_unk = t.flag("/model/fuse_unk", false, JsonNull::Absent);
  hf.ignore_merges = t.flag("/model/ignore_merges", false, JsonNull::Absent);
}

// The members each kind of object has that the pipeline reads or knows to leave ids alone.
const std::set<std::string>& known_members(const std::string& kind) {
  static const std::map<std::string, std::set<std::string>> kKnown = {
      {"", {"version", "truncation", "padding", "added_tokens", "normalizer", "pre_tokenizer", "post_processor", "decoder", "model"}},
      {"BPE", {"type", "dropout", "unk_token", "continuing_subword_prefix", "end_of_word_suffix", "fuse_unk", "byte_fallback",
               "ignore_merges", "vocab", "merges"}},
      {"WordPiece", {"type", "unk_token", "continuing_subword_prefix", "max_input_chars_per_word", "vocab"}},
      {"added", {"id", "content", "single_word", "lstrip", "rstrip", "normalized", "special"}},
      {"Prepend", {"type", "prepend"}},
      {"Replace", {"type", "pattern", "content"}},
      {"NFC", {"type"}}, {"NFD", {"type"}}, {"NFKC", {"type"}}, {"NFKD", {"type"}}, {"Lowercase", {"type"}},
      {"BertNormalizer", {"type", "clean_text", "handle_chinese_chars", "strip_accents", "lowercase"}},
      {"Metaspace", {"type", "replacement", "prepend_scheme", "split", "add_prefix_space", "str_rep"}},
      {"BertPreTokenizer", {"type"}},
      {"TemplateProcessing", {"type", "single", "pair", "special_tokens"}},
      {"BertProcessing", {"type", "sep", "cls"}},
      {"ByteLevel", {"type", "add_prefix_space", "trim_offsets", "use_regex"}}};
  static const std::set<std::string> kNone;
  const auto it = kKnown.find(kind);
  return it == kKnown.end() ? kNone : it->second;
}

void unknown_members(const JsonSettings& t, const std::string& pointer, const std::string& kind, std::vector<std::string>& unknown) {
  const json* object = t.find(pointer, JsonNull::Absent);
  if (!object || !object->is_object()) return;
  for (const auto& [member, value] : object->items())
    if (!known_members(kind).count(member)) unknown.push_back(pointer + "/" + pointer_token(member));
}

// One warning naming the members of the file's objects that attnviz does not know (a newer
// tokenizers release may give them meaning): the top level, the model, added tokens, and each
// normalizer, pre-tokenizer and post-processor step.
void warn_unknown_members(const JsonSettings& t, Vocabulary& vocab) {
  std::vector<std::string> unknown;
  unknown_members(t, "", "", unknown);
  unknown_members(t, "/model", t.text("/model/type", "BPE"), unknown);
  if (const json* added = t.find("/added_tokens", JsonNull::Absent); added && added->is_array())
    for (std::size_t i = 0; i < added->size(); ++i) unknown_members(t, "/added_tokens/" + std::to_string(i), "added", unknown);
  for (const auto& [pointer, list] : {std::pair<const char*, const char*>{"/normalizer", "normalizers"}, {"/pre_tokenizer", "pretokenizers"},
                                      {"/post_processor", "processors"}})
    for (const std::string& at : step_pointers(t, pointer, list)) unknown_members(t, at, t.text(at + "/type", ""), unknown);
  if (unknown.empty()) return;
  std::string names;
  for (const std::string& name : unknown) names += (names.empty() ? "" : ", ") + name;
  vocab.warnings.push_back(t.file() + ": members attnviz does not know, ignored: " + names);
}

}  // namespace

bool is_hf_pipeline_tokenizer(const JsonSettings& t) {
  const std::string type = t.text("/model/type", t.find("/model/merges") ? "BPE" : "");
  if (type == "WordPiece") return true;
  if (type != "BPE") return false;
  if (!optional_object(t, "/pre_tokenizer")) return true;
  for (const std::string& at : step_pointers(t, "/pre_tokenizer", "pretokenizers"))
    if (t.text(at + "/type", "") == "Metaspace") return true;
  return false;
}

Vocabulary hf_pipeline_vocabulary(const JsonSettings& t) {
  const std::string& path = t.file();
  const bool wordpiece = t.text("/model/type", "BPE") == "WordPiece";
  require_no_length_change(t);
  Vocabulary vocab;
  vocab.source = path;
  vocab.model = wordpiece ? "hf-wordpiece" : "hf-bpe";
  HfPipeline& hf = vocab.hf;
  for (const std::string& at : step_pointers(t, "/normalizer", "normalizers")) hf.normalizer.push_back(normalizer_step(t, at));
  for (const std::string& at : step_pointers(t, "/pre_tokenizer", "pretokenizers")) hf.pre_tokenizer.push_back(pre_tokenizer_step(t, at));

  std::unordered_map<std::string, std::int32_t> ids;  // /model/vocab's: what merges may name
  const std::vector<AddedToken> added = read_vocab_table(t, vocab, &ids);
  // The library splits every added token out of the text first, special or not; a normalized
  // one is looked for as the normalizer writes it.
  const auto normalize = [&hf](const std::string& content) { return encode_utf8(hf_normalize(hf.normalizer, decode_utf8(content)).text); };
  set_added_patterns(t, added, normalize, hf, vocab.warnings);

  const std::string unk = t.text("/model/unk_token", wordpiece ? "[UNK]" : "", JsonNull::Absent);
  if (!unk.empty()) {
    const auto it = std::find(vocab.pieces.begin(), vocab.pieces.end(), unk);
    if (it == vocab.pieces.end()) throw InputError::bad_value(path, "/model/unk_token", "a piece of the vocabulary", quoted_piece(unk));
    hf.unk = static_cast<std::int32_t>(it - vocab.pieces.begin());
    vocab.unk = hf.unk;
    vocab.types[static_cast<std::size_t>(hf.unk)] = TokenType::Unknown;
  }
  if (wordpiece) {
    hf.continuing_subword_prefix = t.text("/model/continuing_subword_prefix", "##");
    if (const json* limit = t.find("/model/max_input_chars_per_word"))
      hf.max_input_chars_per_word = static_cast<std::size_t>(read_integer(*limit, path, "/model/max_input_chars_per_word", 0, std::numeric_limits<std::int32_t>::max()));
  } else {
    read_bpe_options(t, hf);
    read_merges(t, ids, hf);
    if (hf.byte_fallback)
      for (std::size_t id = 0; id < vocab.pieces.size(); ++id) {
        const std::string& piece = vocab.pieces[id];
        if (vocab.types[id] == TokenType::Normal && piece.size() == 6 && piece.compare(0, 3, "<0x") == 0 && piece[5] == '>')
          vocab.types[id] = TokenType::Byte;
      }
  }
  read_post_processor(t, hf);
  warn_unknown_members(t, vocab);
  if (hf.unk < 0 && !wordpiece && !hf.byte_fallback)
    vocab.warnings.push_back(path + ": /model/unk_token is null: characters missing from the vocabulary are dropped, as the "
                                    "tokenizers library drops them");
  vocab.add_bos = !hf.prefix.empty();
  if (!hf.prefix.empty()) vocab.bos = hf.prefix.front();
  if (!hf.suffix.empty()) vocab.eos = hf.suffix.back();
  // The first space of a decoded text is the one the pipeline put there (Prepend "▁" or Metaspace).
  vocab.add_space_prefix = false;
  for (const HfNormalizerStep& step : hf.normalizer)
    if (step.kind == HfNormalizerStep::Kind::Prepend && !step.content.empty()) vocab.add_space_prefix = true;
  for (const HfPreTokenizerStep& step : hf.pre_tokenizer)
    if (step.kind == HfPreTokenizerStep::Kind::Metaspace && step.prepend != HfPreTokenizerStep::Prepend::Never) vocab.add_space_prefix = true;
  return vocab;
}

}  // namespace attnviz
