#include "model/tokenizers/hf_tokenizer_parts.hpp"

#include <algorithm>
#include <map>
#include <tuple>
#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "core/utf8.hpp"

namespace attnviz::hf_json {

using json = nlohmann::json;

// The object at `pointer`, or nullptr when it is absent or null (how Hugging Face writes "none").
const json* optional_object(const JsonSettings& t, const std::string& pointer) {
  const json* value = t.find(pointer, JsonNull::Absent);
  if (value && !value->is_object()) throw InputError::bad_value(t.file(), pointer, "an object or null", describe_json(*value));
  return value;
}

// Refuses `pointer` unless it is absent or holds `inert` (the value that leaves ids alone).
void require_flag(const JsonSettings& t, const std::string& pointer, bool inert, const std::string& meaning) {
  if (t.flag(pointer, inert, JsonNull::Absent) != inert)
    throw InputError::unsupported_tokenizer(t.file(), pointer + " " + (inert ? "false" : "true") + " (" + meaning + ")",
                                            inert ? "true" : "false");
}

// /truncation and /padding, which Hugging Face applies after the post-processor. Truncation
// cuts a long text's ids; fixed-length padding, or padding to a multiple of N, appends pad ids
// even to one text. Padding to the longest of a batch changes nothing for one text.
void require_no_length_change(const JsonSettings& t) {
  if (const json* truncation = optional_object(t, "/truncation"))
    throw InputError::unsupported_tokenizer(t.file(), "/truncation " + truncation->dump() + " (ids cut to a maximum length)", "null");
  const json* padding = optional_object(t, "/padding");
  if (!padding) return;
  const json* strategy = t.find("/padding/strategy", JsonNull::Absent);
  const json* multiple = t.find("/padding/pad_to_multiple_of", JsonNull::Absent);
  const bool batch_longest = !strategy || (strategy->is_string() && strategy->get<std::string>() == "BatchLongest");
  const bool pads_one_text = !batch_longest || (multiple && !(multiple->is_number_unsigned() && multiple->get<std::uint64_t>() <= 1));
  if (pads_one_text)
    throw InputError::unsupported_tokenizer(t.file(), "/padding " + padding->dump() + " (pad ids added to one text)",
                                            "null, {\"strategy\": \"BatchLongest\"} without pad_to_multiple_of");
}

// /added_tokens/I: its id, content and matching options. The library reads each entry as an
// AddedTokenWithId, whose members all lack a default: a file without one is refused there.
std::vector<AddedToken> added_tokens(const JsonSettings& t) {
  const json* list = t.find("/added_tokens", JsonNull::Absent);
  if (!list) return {};
  if (!list->is_array()) throw InputError::bad_value(t.file(), "/added_tokens", "a list of tokens", describe_json(*list));
  std::vector<AddedToken> tokens;
  for (std::size_t i = 0; i < list->size(); ++i) {
    const std::string at = "/added_tokens/" + std::to_string(i);
    if (!(*list)[i].is_object()) throw InputError::bad_value(t.file(), at, "an object {\"id\", \"content\", …}", describe_json((*list)[i]));
    const json* id = t.find(at + "/id");
    if (!id) throw InputError::missing_field(t.file(), at + "/id", "the token's id");
    const auto index = static_cast<std::size_t>(read_integer(*id, t.file(), at + "/id", 0, (1 << 24) - 1));
    const json* content = t.find(at + "/content");
    if (!content) throw InputError::missing_field(t.file(), at + "/content", "the token's text");
    const auto option = [&](const char* name, const char* meaning) {
      const std::string pointer = at + "/" + name;
      const json* value = t.find(pointer);
      if (!value)
        throw InputError::missing_field(t.file(), pointer, std::string(meaning) + ", true or false; the tokenizers library refuses a token without it");
      return read_bool(*value, t.file(), pointer);
    };
    AddedToken token{index, read_string(*content, t.file(), at + "/content"), false, false, false, false, false};
    token.single_word = option("single_word", "matched only as a whole word");
    token.lstrip = option("lstrip", "takes the white space before it");
    token.rstrip = option("rstrip", "takes the white space after it");
    token.normalized = option("normalized", "matched in the normalized text");
    token.special = option("special", "a special token");
    tokens.push_back(std::move(token));
  }
  return tokens;
}

void set_added_patterns(const JsonSettings& t, const std::vector<AddedToken>& added,
                        const std::function<std::string(const std::string&)>& normalize, HfPipeline& hf,
                        std::vector<std::string>& warnings) {
  std::unordered_map<std::string, std::size_t> first;  // a normalized pattern -> the index of its token
  for (std::size_t i = 0; i < added.size(); ++i) {
    const AddedToken& token = added[i];
    HfAddedToken pattern{token.normalized ? normalize(token.content) : token.content, static_cast<std::int32_t>(token.id),
                         token.single_word, token.lstrip, token.rstrip, token.special};
    if (token.normalized && pattern.pattern.empty() && !token.content.empty())
      warnings.push_back(t.file() + ": /added_tokens/" + std::to_string(i) + " " + quoted_piece(token.content) +
                         " is \"\" after the normalizer, so it is never matched (the tokenizers library's matcher may run out "
                         "of memory on such a token)");
    if (token.normalized && !pattern.pattern.empty()) {
      const auto [it, inserted] = first.emplace(pattern.pattern, i);
      if (!inserted)
        throw InputError::inconsistent(t.file(), "/added_tokens/" + std::to_string(it->second) + " " + quoted_piece(added[it->second].content) +
                                                     " and /added_tokens/" + std::to_string(i) + " " + quoted_piece(token.content) +
                                                     " both read " + quoted_piece(pattern.pattern) +
                                                     " after the normalizer: the tokenizers library gives either id for it, at random");
    }
    (token.normalized ? hf.normalized_added : hf.raw_added).push_back(std::move(pattern));
  }
}

// The steps at `pointer`: one object of kind `type`, or a Sequence of them under `list`.
std::vector<std::string> step_pointers(const JsonSettings& t, const std::string& pointer, const std::string& list) {
  if (!optional_object(t, pointer)) return {};
  if (t.text(pointer + "/type", "") != "Sequence") return {pointer};
  const json* steps = t.find(pointer + "/" + list);
  if (!steps || !steps->is_array())
    throw InputError::bad_value(t.file(), pointer + "/" + list, "a list of steps", steps ? describe_json(*steps) : "nothing");
  std::vector<std::string> pointers;
  for (std::size_t i = 0; i < steps->size(); ++i) {
    const std::string at = pointer + "/" + list + "/" + std::to_string(i);
    for (const std::string& inner : step_pointers(t, at, list)) pointers.push_back(inner);
  }
  return pointers;
}

// Metaspace's deserializer (MetaspaceHelper in pre_tokenizers/metaspace.rs), which both the
// pre-tokenizer and the decoder go through.
HfPreTokenizerStep metaspace_step(const JsonSettings& t, const std::string& at) {
  HfPreTokenizerStep step;
  step.kind = HfPreTokenizerStep::Kind::Metaspace;
  const json* replacement = t.find(at + "/replacement");
  if (!replacement)
    throw InputError::missing_field(t.file(), at + "/replacement", "the character a space becomes; the tokenizers library refuses a Metaspace without it");
  if (!replacement->is_string() || decode_utf8(replacement->get<std::string>()).size() != 1)
    throw InputError::bad_value(t.file(), at + "/replacement", "one character (as the tokenizers library requires)", describe_json(*replacement));
  step.replacement = replacement->get<std::string>();
  step.split = t.flag(at + "/split", true, JsonNull::Absent);
  if (const json* legacy = t.find(at + "/str_rep", JsonNull::Absent); legacy && !legacy->is_string())
    throw InputError::bad_value(t.file(), at + "/str_rep", "a string or null (as the tokenizers library requires)", describe_json(*legacy));
  const json* scheme = t.find(at + "/prepend_scheme");
  const std::string name = scheme && scheme->is_string() ? scheme->get<std::string>() : "always";
  using Prepend = HfPreTokenizerStep::Prepend;
  if (scheme && !(scheme->is_string() && (name == "always" || name == "first" || name == "never")))
    throw InputError::bad_value(t.file(), at + "/prepend_scheme", "\"always\", \"first\" or \"never\" (as the tokenizers library requires)",
                                describe_json(*scheme));
  step.prepend = name == "always" ? Prepend::Always : name == "first" ? Prepend::First : Prepend::Never;
  // Files from before prepend_scheme say add_prefix_space; the library reads true as nothing
  // (prepend_scheme decides) and false as "never", refusing it beside another scheme.
  if (!t.flag(at + "/add_prefix_space", true, JsonNull::Absent) && step.prepend != Prepend::Never)
    throw InputError::inconsistent(t.file(), at + "/add_prefix_space false does not match " +
                                                 (scheme ? at + "/prepend_scheme \"" + name + "\"" : "the default prepend_scheme \"always\"") +
                                                 " (the tokenizers library refuses the file: \"add_prefix_space does not match declared "
                                                 "prepend_scheme\"; false goes with \"never\")");
  return step;
}

namespace {

// The members the library's deserializers require (serde fields without a default) of the kinds
// attnviz reads, by where the object is and its "type". The normalizers' are checked as they are
// read (hf_tokenizer_kinds), Metaspace's by metaspace_step.
const std::vector<std::string>& required_members(const std::string& place, const std::string& type) {
  static const std::map<std::string, std::vector<std::string>> kRequired = {
      {"pre-tokenizer ByteLevel", {"add_prefix_space", "trim_offsets"}},
      {"pre-tokenizer Split", {"pattern", "behavior", "invert"}},
      {"post-processor ByteLevel", {"add_prefix_space", "trim_offsets"}},
      {"post-processor TemplateProcessing", {"single", "pair", "special_tokens"}},
      {"post-processor BertProcessing", {"sep", "cls"}},
      {"decoder ByteLevel", {"add_prefix_space", "trim_offsets"}},
      {"decoder Replace", {"pattern", "content"}},
      {"model BPE", {"vocab", "merges"}},
      {"model WordPiece", {"vocab", "unk_token", "continuing_subword_prefix", "max_input_chars_per_word"}}};
  static const std::vector<std::string> kNone;
  const auto it = kRequired.find(place + " " + type);
  return it == kRequired.end() ? kNone : it->second;
}

void require_members(const JsonSettings& t, const std::string& at, const std::string& place, const std::string& type) {
  for (const std::string& member : required_members(place, type))
    if (!t.find(at + "/" + member, JsonNull::Absent))
      throw InputError::missing_field(t.file(), at + "/" + member, "the tokenizers library requires it in a " + type + " " + place +
                                                                       " and refuses the file without it");
}

}  // namespace

void require_library_accepts(const JsonSettings& t) {
  if (const json* version = t.find("/version"); version && !(version->is_string() && version->get<std::string>() == "1.0"))
    throw InputError::bad_value(t.file(), "/version", "\"1.0\" (the tokenizers library refuses another version)", describe_json(*version));
  if (const json* model = t.find("/model"); model && model->is_object())
    require_members(t, "/model", "model", t.text("/model/type", t.find("/model/merges") ? "BPE" : ""));
  for (const auto& [pointer, list, place] : {std::tuple<const char*, const char*, const char*>{"/pre_tokenizer", "pretokenizers", "pre-tokenizer"},
                                             {"/post_processor", "processors", "post-processor"}, {"/decoder", "decoders", "decoder"}})
    for (const std::string& at : step_pointers(t, pointer, list)) {
      const std::string type = t.text(at + "/type", "");
      if (type == "Metaspace" && std::string(place) != "post-processor") metaspace_step(t, at);
      require_members(t, at, place, type);
    }
}

// Puts each piece at its id, refusing an id given two pieces or a piece given two ids. /model/vocab
// is a JSON object, so its pieces are distinct, but two may share an id; an added token may
// name a piece /model/vocab has under another id (Hugging Face then keeps the vocab's id and
// logs "Token '…' was expected to have ID …"), or an id whose piece differs. Either way one of
// the two tokens could never be produced or shown, so the file is refused, naming both places.
PieceAssigner::PieceAssigner(const std::string& path, Vocabulary& vocab) : path_(path), vocab_(vocab), where_(vocab.size()) {}

void PieceAssigner::operator()(std::size_t id, const std::string& piece, const std::string& pointer, TokenType type) {
  const std::string at = pointer + ": ";
  if (!where_[id].empty() && vocab_.pieces[id] != piece)
    throw InputError::inconsistent(path_, at + "id " + std::to_string(id) + " for " + quoted_piece(piece) + ", but " + where_[id] +
                                              " gives id " + std::to_string(id) + " to " + quoted_piece(vocab_.pieces[id]) +
                                              " (an id has one piece)");
  const auto [it, inserted] = ids_.emplace(piece, id);
  if (!inserted && it->second != id)
    throw InputError::inconsistent(path_, at + quoted_piece(piece) + " has id " + std::to_string(id) + ", but " + where_[it->second] +
                                              " gives it id " + std::to_string(it->second) + " (a piece has one id)");
  vocab_.pieces[id] = piece;
  vocab_.types[id] = type;
  where_[id] = pointer;
}

std::string pointer_token(const std::string& key) {
  std::string token;
  for (const char c : key) token += c == '~' ? "~0" : c == '/' ? "~1" : std::string(1, c);
  return token;
}

std::vector<AddedToken> read_vocab_table(const JsonSettings& t, Vocabulary& vocab,
                                         std::unordered_map<std::string, std::int32_t>* model_ids) {
  const std::string& path = t.file();
  const nlohmann::json* pieces = t.find("/model/vocab");
  if (!pieces || !pieces->is_object()) throw InputError::missing_field(path, "/model/vocab", "piece -> id");
  std::vector<AddedToken> added = added_tokens(t);
  std::size_t size = pieces->size();
  for (const AddedToken& token : added) size = std::max(size, token.id + 1);
  if (size > (1u << 24)) throw InputError::inconsistent(path, "/model/vocab: more than 16777216 pieces");
  vocab.pieces.assign(size, "");
  vocab.types.assign(size, TokenType::Undefined);
  PieceAssigner assign(path, vocab);
  for (const auto& [piece, id] : pieces->items()) {
    const std::string pointer = "/model/vocab/" + pointer_token(piece);
    if (!id.is_number_unsigned() || id.get<std::size_t>() >= size)
      throw InputError::bad_value(path, pointer, "an id below " + std::to_string(size), id.dump());
    assign(id.get<std::size_t>(), piece, pointer, TokenType::Normal);
    if (model_ids) model_ids->emplace(piece, static_cast<std::int32_t>(id.get<std::size_t>()));
  }
  for (std::size_t i = 0; i < added.size(); ++i)
    assign(added[i].id, added[i].content, "/added_tokens/" + std::to_string(i),
           added[i].special ? TokenType::Control : TokenType::UserDefined);
  return added;
}

}  // namespace attnviz::hf_json
