// Whether a tokenizer's ids fit the model it came with: a tokenizer.json whose vocabulary is
// larger than the model's embedding table is caught when the two are loaded, not when a text
// first yields an id past the table. Does not tokenize, and does not read either file.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/tokenizers/vocabulary.hpp"

namespace attnviz {

/// Checks `vocab`'s ids against the model's `n_vocab` token embeddings (0 … n_vocab − 1);
/// `model` names the model (its file or folder) in messages. transformers checks nothing at
/// load and fails with an IndexError in the embedding when an id past the table is run;
/// attnviz refuses at load what ordinary text can reach and names the rest:
///  - throws InputError naming vocabulary_name(vocab), both counts and the first such piece when
///    a piece of the tokenizer's own vocabulary (/model/vocab: TokenType Normal, Byte or Unknown),
///    or a token added to every text (the post-processor's template, BOS/EOS when added, the
///    unknown token) has an id ≥ n_vocab;
///  - returns one warning naming the added tokens (/added_tokens) with ids ≥ n_vocab, which only a
///    text that spells them produces (that text is then refused by id): Gemma 3 1B's tokenizer
///    has "<image_soft_token>" at 262144 beside 262144 embeddings. "" when everything fits.
std::string check_tokenizer_fits(const Vocabulary& vocab, long n_vocab, const std::string& model);

/// check_tokenizer_fits, its warning (if any) added to vocab.warnings, which the commands print
/// with the vocabulary's own: what every command that reads a Hugging Face folder's
/// tokenizer.json beside its model calls (dump, heatmaps, compare, attribute, explain, census,
/// tokenize), so that each says the same. Throws as check_tokenizer_fits.
void require_tokenizer_fits(Vocabulary& vocab, long n_vocab, const std::string& model);

/// One warning when a text's tokens say the tokenizer could not read most of it: more than half
/// of the tokens that came from the text (special tokens not counted) are the unknown token
/// ([UNK], <unk>: the model sees nothing of what it replaced) or byte fallbacks (<0xE7>: pieces of
/// characters the vocabulary lacks), with the counts and an example of what they stand for;
/// `what` names the text ("--text"). "" otherwise. Byte-level BPE (GPT-2, LLaMA 3, Qwen) spells
/// every text in bytes by design and is never warned about.
std::string unread_text_warning(const Vocabulary& vocab, const std::vector<std::int32_t>& ids, const std::string& what);

}  // namespace attnviz
