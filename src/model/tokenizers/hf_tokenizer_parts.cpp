#include "model/tokenizers/hf_tokenizer_parts.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "core/error.hpp"

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

// /added_tokens/I: its id and content, with the matching options attnviz implements (an added
// token is recognised wherever it occurs, taking no spaces around it).
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
    for (const char* option : {"lstrip", "rstrip", "single_word"})
      require_flag(t, at + "/" + option, false, "how the token is matched in the text");
    const bool special = t.flag(at + "/special", false);
    // The library's AddedToken default: a special token is matched in the raw text, another in the normalized text.
    tokens.push_back({index, read_string(*content, t.file(), at + "/content"), special, t.flag(at + "/normalized", !special)});
  }
  return tokens;
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
