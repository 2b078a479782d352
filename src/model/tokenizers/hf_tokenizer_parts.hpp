// Pieces of a tokenizer.json that every kind reads alike (hf_tokenizer: byte-level BPE;
// hf_tokenizer_kinds: SentencePiece-style BPE and WordPiece). Internal to model/.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <unordered_map>
#include <vector>
#include <nlohmann/json_fwd.hpp>

#include "io/json_reader.hpp"
#include "model/tokenizers/vocabulary.hpp"

namespace attnviz::hf_json {

/// The object at `pointer`, or nullptr when it is absent or null (how Hugging Face writes
/// "none"). Throws InputError::bad_value for another kind of value.
const nlohmann::json* optional_object(const JsonSettings& t, const std::string& pointer);

/// Refuses `pointer` (InputError::unsupported_tokenizer, naming it and `meaning`) unless it is
/// absent or holds `inert`, the value that leaves ids alone.
void require_flag(const JsonSettings& t, const std::string& pointer, bool inert, const std::string& meaning);

/// The steps at `pointer` (a normalizer, pre-tokenizer, post-processor or decoder): the object
/// itself, or with "type": "Sequence" the steps of its list member `list`, nested Sequences
/// flattened; none when absent or null. Throws InputError::bad_value for a Sequence without a list.
std::vector<std::string> step_pointers(const JsonSettings& t, const std::string& pointer, const std::string& list);

/// Refuses /truncation, and /padding that reaches one text (a Fixed length, pad_to_multiple_of).
void require_no_length_change(const JsonSettings& t);

/// /added_tokens/I: its id and content, and how the library matches it in text. Every member
/// is required, as the library requires it (InputError::missing_field naming it).
struct AddedToken {
  std::size_t id;
  std::string content;
  bool special;
  bool normalized;  ///< matched in the normalized text, its content normalized the same way
  bool single_word, lstrip, rstrip;
};
std::vector<AddedToken> added_tokens(const JsonSettings& t);

/// hf.raw_added and hf.normalized_added from `added` (the library's two split tries): a normalized
/// token's pattern is its content through `normalize` (the file's normalizer). Throws
/// InputError::inconsistent naming both tokens when two normalized tokens read the same after
/// the normalizer ("AB" and "ab" beside Lowercase): the library then gives either id, at random.
/// A normalized token that the normalizer empties is never matched, said in `warnings` (the
/// library's matcher runs out of memory on ordinary text beside such a pattern).
void set_added_patterns(const JsonSettings& t, const std::vector<AddedToken>& added,
                        const std::function<std::string(const std::string&)>& normalize, HfPipeline& hf,
                        std::vector<std::string>& warnings);

/// Refuses what the tokenizers library refuses in a tokenizer.json whatever its kind: a
/// /version other than "1.0"; a Metaspace pre-tokenizer or decoder (also inside a Sequence)
/// that its deserializer (pre_tokenizers/metaspace.rs) refuses, see metaspace_step; a member its
/// deserializers require missing from the model, a ByteLevel or Split pre-tokenizer, a
/// ByteLevel, TemplateProcessing or BertProcessing post-processor, a ByteLevel or Replace
/// decoder (InputError::missing_field naming it).
void require_library_accepts(const JsonSettings& t);

/// The Metaspace object at `at` read as the library's deserializer reads it: "replacement" one
/// character (required), "split" true or false (null or absent: true), "prepend_scheme"
/// "always", "first" or "never" (absent: "always"), the legacy "add_prefix_space" (null,
/// true, or false with prepend_scheme "never"), "str_rep" a string or null. Throws InputError
/// naming the file, the member and the library's reason otherwise.
HfPreTokenizerStep metaspace_step(const JsonSettings& t, const std::string& at);

/// Puts each piece at its id in a Vocabulary sized beforehand, refusing (InputError naming both
/// JSON pointers) an id given two pieces or a piece given two ids.
class PieceAssigner {
 public:
  PieceAssigner(const std::string& path, Vocabulary& vocab);
  void operator()(std::size_t id, const std::string& piece, const std::string& pointer, TokenType type);

 private:
  const std::string& path_;
  Vocabulary& vocab_;
  std::vector<std::string> where_;  // the JSON pointer that gave each id its piece; "" for none yet
  std::unordered_map<std::string, std::size_t> ids_;
};

/// `key` as one JSON pointer reference token (RFC 6901: "~" as "~0", "/" as "~1").
std::string pointer_token(const std::string& key);

/// The id table of /model/vocab and /added_tokens, which every tokenizer.json kind has: sizes
/// vocab.pieces and vocab.types to hold every id (at most 2^24), puts each /model/vocab piece at
/// its id (TokenType::Normal) and each added token at its own (Control when special, UserDefined
/// otherwise), and returns the added tokens. `model_ids`, when given, receives /model/vocab's
/// piece → id (what BPE merges may name). Throws InputError naming the file and pointer for a
/// missing /model/vocab, an id outside the table, or an id or piece given twice.
std::vector<AddedToken> read_vocab_table(const JsonSettings& t, Vocabulary& vocab,
                                         std::unordered_map<std::string, std::int32_t>* model_ids = nullptr);

}  // namespace attnviz::hf_json
