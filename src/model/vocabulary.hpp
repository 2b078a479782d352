// A model's tokenizer vocabulary as GGUF stores it (tokenizer.ggml.*), and the tokenizers that
// turn text into its ids exactly as llama.cpp's llama-vocab.cpp does for the same file:
//   "llama": SentencePiece-style BPE by piece scores, dummy space prefix, <0xXX> byte fallback;
//   "gpt2":  byte-level BPE with the merges list, pre-tokenized by the regex named by
//            tokenizer.ggml.pre (PCRE2);
//   "bert":  WordPiece with ## continuations.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

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
  bool add_bos = true;                ///< tokenizer.ggml.add_bos_token (llama default true)
  bool add_eos = false;               ///< tokenizer.ggml.add_eos_token
  bool add_space_prefix = true;       ///< tokenizer.ggml.add_space_prefix (llama default true)

  std::size_t size() const { return pieces.size(); }
};

/// Reads tokenizer.ggml.* from `file`. Throws InputError naming the key for a missing token
/// list, arrays of different lengths, or a special-token id outside the vocabulary.
Vocabulary vocabulary_from_gguf(const GgufFile& file);

/// Token ids of `text` (UTF-8). With add_special, BOS (and EOS, CLS/SEP for bert) are added as
/// the vocabulary says; without it, none. Throws InputError for a tokenizer model this build
/// does not implement (the message names it and says to pass --token-ids).
std::vector<std::int32_t> tokenize(const Vocabulary& vocab, std::string_view text, bool add_special);

/// The text a token stands for when decoded: "▁" becomes a space (llama), <0xXX> the byte,
/// GPT-2's byte-to-unicode mapping is undone, "##" continuations join (bert); control tokens
/// give "". May be a partial UTF-8 sequence (byte tokens).
std::string token_text(const Vocabulary& vocab, std::int32_t id);

/// The decoded text of `ids` (token_text of each, concatenated; for llama, the leading space
/// of the first piece after BOS is dropped as SentencePiece does).
std::string decode(const Vocabulary& vocab, const std::vector<std::int32_t>& ids);

}  // namespace attnviz
