// A model's tokenizer vocabulary as GGUF stores it (tokenizer.ggml.*), and the tokenizers that
// turn text into its ids exactly as llama.cpp's llama-vocab.cpp does for the same file:
//   "llama": SentencePiece-style BPE by piece scores, dummy space prefix, <0xXX> byte fallback;
//   "gpt2":  byte-level BPE with the merges list, pre-tokenized by the regex named by
//            tokenizer.ggml.pre (PCRE2);
//   "bert":  WordPiece, longest pieces first, after BERT's normaliser.
// A tokenizer.json (hf_tokenizer) gives "gpt2", or "hf-bpe" / "hf-wordpiece", which follow Hugging
// Face's tokenizers library instead (tokenizer_hf).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/tokenizers/hf_pipeline.hpp"

namespace attnviz {

class GgufFile;

/// tokenizer.ggml.token_type values (llama.cpp's llama_token_type).
enum class TokenType : std::int32_t { Undefined = 0, Normal = 1, Unknown = 2, Control = 3, UserDefined = 4, Unused = 5, Byte = 6 };

/// Everything a tokenizer needs, read from tokenizer.ggml.* keys.
struct Vocabulary {
  std::string model;                  ///< tokenizer.ggml.model: "llama", "gpt2", "bert", …
  std::string pre;                    ///< tokenizer.ggml.pre ("default" when absent)
  std::vector<std::string> pieces;    ///< n_vocab pieces, byte for byte as in the file
  std::vector<float> scores;          ///< n_vocab, or empty
  std::vector<TokenType> types;       ///< n_vocab (Normal when the file has none)
  std::vector<std::string> merges;    ///< "a b" pairs for gpt2, in rank order
  std::optional<std::int32_t> bos, eos, unk, sep, pad, cls, mask;
  /// tokenizer.ggml.eot_token_id (end of turn: LLaMA 3's <|eot_id|>, Gemma's <end_of_turn>) and
  /// tokenizer.ggml.eom_token_id (end of message), which llama.cpp's generation stops at beside EOS.
  std::optional<std::int32_t> eot, eom;
  bool add_bos = true;                ///< tokenizer.ggml.add_bos_token (llama default true)
  bool add_eos = false;               ///< tokenizer.ggml.add_eos_token
  bool add_space_prefix = true;       ///< tokenizer.ggml.add_space_prefix (llama default true)
  bool lowercase = true;              ///< bert: tokenizer.ggml.normalizer.lowercase
  bool strip_accents = true;          ///< bert: tokenizer.ggml.normalizer.strip_accents
  HfPipeline hf;                      ///< "hf-bpe", "hf-wordpiece": the tokenizer.json steps (hf_tokenizer);
                                      ///< "gpt2" from a tokenizer.json: its added tokens and normalizer
  bool hf_added_tokens = false;       ///< gpt2: a tokenizer.json's, whose added tokens (vocab.hf, special ones
                                      ///< too) are split out and its normalizer (NFC, as Qwen 2's, or none)
                                      ///< applied as the tokenizers library does (added_vocabulary)
  /// Tokens that take the white space before (lstrip) or after (rstrip) them out of the text when
  /// found in it: llama.cpp's LLAMA_TOKEN_ATTR_LSTRIP/RSTRIP, which its loader sets by model name
  /// (Phi-3's special tokens rstrip) and which a GGUF does not store.
  std::vector<std::int32_t> lstrip_tokens, rstrip_tokens;
  std::string source;                 ///< the file it was read from, for messages ("" if built in code)
  /// What the file leaves out or holds that the tokens may suffer from (a gpt2 file without
  /// tokenizer.ggml.pre, empty pieces), one line each naming the file; the CLI prints them
  /// when it tokenizes text.
  std::vector<std::string> warnings;

  std::size_t size() const { return pieces.size(); }
};

/// The ids greedy decoding stops at: eos, eot and eom as the vocabulary has them, each once,
/// in ascending order (llama.cpp's end-of-generation set from the file's keys).
std::vector<std::int32_t> end_tokens(const Vocabulary& vocab);

/// vocab.source, or "vocabulary" when it is empty: the FILE that error messages name.
std::string vocabulary_name(const Vocabulary& vocab);

/// Reads tokenizer.ggml.* from `file`; keys it leaves out take llama.cpp's defaults for the
/// model (llama: BOS 1, EOS 2, UNK 0, add_bos, space prefix; bert: [CLS] 101, [UNK] 100,
/// [SEP] 102; gpt2: add_bos only for the llama3 pre-tokenizers, the "default" pre-tokenizer
/// with a warning when tokenizer.ggml.pre is absent). A special-token id of 4294967295
/// (uint32 -1) means "none". Throws InputError naming the key for a missing model or token
/// list, a non-empty piece listed twice (naming it and both ids, as llama.cpp does), arrays of
/// different lengths, a special-token id outside the vocabulary, a gpt2 file without merges,
/// or add_bos/add_eos set with no such token. Another tokenizer model loads (token_text
/// works), and tokenize() refuses it.
Vocabulary vocabulary_from_gguf(const GgufFile& file);

/// Token ids of `text` (UTF-8): llama.cpp's llama_tokenize(vocab, text, add_special, parse_special).
///
/// add_special: BOS (and EOS, CLS/SEP for bert; a tokenizer.json's post-processor template) are
/// added as the vocabulary says; without it, none.
///
/// parse_special: how the text of special tokens written in `text` is read.
///  * true (attnviz's default, and what llama.cpp's tools do with a prompt): a GGUF's control,
///    user-defined and unknown tokens ("<|im_start|>", "<s>", "<|endoftext|>", "[CLS]") found in the
///    text are those tokens, longest first (tokenizer_st_partition); the text between them is
///    tokenized on its own (SentencePiece puts its dummy space before each run that follows a
///    token, "<|im_start|>user" -> <|im_start|>, "▁user"). A tokenizer.json's added tokens are all
///    split out, as the tokenizers library's encode() does.
///  * false (--no-parse-special): a GGUF's control and unknown tokens are read as plain text
///    ("<s>" becomes "<", "s", ">"); user-defined tokens are still split out, as llama.cpp does. A
///    tokenizer.json's special added tokens ("special": true) are read as plain text and its other
///    added tokens still split out: the tokenizers library's encode_special_tokens (transformers'
///    split_special_tokens=True).
/// Chat text rendered from a template is tokenized with parse_special true.
///
/// Throws InputError for a tokenizer model this build does not implement (the message names it
/// and says to pass --token-ids).
/// Supported: "llama" (any text; bytes missing from the vocabulary become <0xXX> tokens, or
/// the unknown token without them), "gpt2" with tokenizer.ggml.pre one of gpt2_pre_tokenizers()
/// (bytes that are not UTF-8 are read as U+FFFD, as llama.cpp does), "bert" (WordPiece; CLS is
/// the BOS id, as llama.cpp has it), "hf-bpe" and "hf-wordpiece" (tokenizer.json).
std::vector<std::int32_t> tokenize(const Vocabulary& vocab, std::string_view text, bool add_special, bool parse_special);

/// The text a token stands for when decoded: "▁" becomes a space (llama), <0xXX> the byte,
/// GPT-2's byte-to-unicode mapping is undone, "##" continuations join (bert); control tokens
/// give "". May be a partial UTF-8 sequence (byte tokens). A bert GGUF stores a word's first
/// piece with a leading "▁" and its continuations bare (llama.cpp's converter drops "##"), so
/// there "▁" becomes a space as for llama. Unknown and user-defined tokens give their piece.
/// Throws InputError for an id outside [0, size()).
std::string token_text(const Vocabulary& vocab, std::int32_t id);

/// "<id 515>": how a token the model has but its tokenizer does not name is labelled and decoded
/// (padded vocabularies: a config's vocab_size above the tokenizer's).
std::string unnamed_token_label(std::int32_t id);

/// The decoded text of `ids` (token_text of each, concatenated; an id at or past size(), which a
/// model with a padded vocabulary can generate, as unnamed_token_label; for llama, the leading space
/// of the first piece after BOS is dropped as SentencePiece does, and for bert the space of
/// the first word). No other clean-up (llama.cpp's clean_spaces is not applied), so
/// decode(tokenize(text)) is text for gpt2 and for llama vocabularies with byte tokens.
/// Throws InputError for a negative id.
std::string decode(const Vocabulary& vocab, const std::vector<std::int32_t>& ids);

/// The type of token `id` (Normal when the file gives no types). Throws InputError for an id
/// outside the vocabulary.
TokenType token_type(const Vocabulary& vocab, std::int32_t id);

/// What token `id` reads as, always valid UTF-8: the labels of a byte-level BPE model's
/// pictures and the `token_texts` of its dumps and of `tokenize`. Control, unknown and
/// user-defined tokens give their piece ("<s>", "[CLS]"), byte tokens their piece ("<0xE7>"),
/// other tokens their token_text with each byte that is not part of valid UTF-8 written
/// "<0xXX>": a GPT-2 token holding the first two bytes of 你 (E4 BD A0) reads "<0xE4><0xBD>",
/// never "ä½" (its piece) nor U+FFFD (which would hide which bytes it holds). This is how
/// llama.cpp's vocabularies name byte tokens. Control characters are kept (labels draw them
/// visibly). Throws InputError for an id outside the vocabulary.
std::string token_display_text(const Vocabulary& vocab, std::int32_t id);

/// True when the vocabulary's pieces spell bytes in GPT-2's byte-to-unicode alphabet (model
/// "gpt2": "Ġ" for a space, "ä½" for the bytes E4 BD) rather than text: labels then show
/// token_display_text. SentencePiece and WordPiece pieces are text already, "▁" marking a word
/// start, and are shown as stored.
bool pieces_are_byte_level(const Vocabulary& vocab);

/// How a `tokenize` listing shows token `id`, on one line: control, unknown and user-defined
/// tokens as their piece ("<s>", "[CLS]"), byte tokens as "<0xE7>", other tokens as their
/// token_text with every byte that is not part of valid UTF-8 written "<0xXX>" (a GPT-2 token
/// holding part of a character), and '\n', '\r', '\t' written as those two-character escapes
/// (other control bytes as "<0xXX>"): token_display_text made one line. Throws InputError for
/// an id outside the vocabulary.
std::string piece_display(const Vocabulary& vocab, std::int32_t id);

/// `piece` in double quotes for a message: '"' and '\\' escaped, control bytes as \n, \t, \r
/// or \xNN; other bytes as they are.
std::string quoted_piece(std::string_view piece);

/// The tokenizer.ggml.pre values the "gpt2" tokenizer accepts, for messages and --help.
std::vector<std::string> gpt2_pre_tokenizers();

}  // namespace attnviz
