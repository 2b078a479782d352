#include "model/tokenizers/tokenizer_fit.hpp"

#include <cstdint>
#include <optional>
#include <vector>

#include "core/error.hpp"

namespace attnviz {

namespace {

std::string id_range(long n_vocab) { return "(0-" + std::to_string(n_vocab - 1) + ")"; }

// The ids every text (or every text with an unknown character) gets besides its own pieces.
std::vector<std::pair<std::int32_t, std::string>> added_to_texts(const Vocabulary& vocab) {
  std::vector<std::pair<std::int32_t, std::string>> ids;
  for (const std::int32_t id : vocab.hf.prefix) ids.emplace_back(id, "the post-processor's template adds");
  for (const std::int32_t id : vocab.hf.suffix) ids.emplace_back(id, "the post-processor's template adds");
  if (vocab.add_bos && vocab.bos) ids.emplace_back(*vocab.bos, "every text begins with the BOS token");
  if (vocab.add_eos && vocab.eos) ids.emplace_back(*vocab.eos, "every text ends with the EOS token");
  if (vocab.hf.unk >= 0) ids.emplace_back(vocab.hf.unk, "an unknown character gives the unknown token");
  if (vocab.unk) ids.emplace_back(*vocab.unk, "an unknown character gives the unknown token");
  return ids;
}

std::string counted(std::size_t n, const std::string& one, const std::string& many) { return std::to_string(n) + " " + (n == 1 ? one : many); }

bool ordinary(TokenType type) { return type == TokenType::Normal || type == TokenType::Byte || type == TokenType::Unknown; }

}  // namespace

std::string check_tokenizer_fits(const Vocabulary& vocab, long n_vocab, const std::string& model) {
  const std::string file = vocabulary_name(vocab);
  const std::string embeddings = "the model " + model + " has " + std::to_string(n_vocab) + " token embeddings " + id_range(n_vocab);
  const auto piece = [&vocab](std::size_t id) {
    return id < vocab.size() ? quoted_piece(vocab.pieces[id]) + " " + std::to_string(id) : "id " + std::to_string(id);
  };
  for (const auto& [id, why] : added_to_texts(vocab))
    if (id >= n_vocab)
      throw InputError::inconsistent(file, why + " (" + piece(static_cast<std::size_t>(id)) + "), but " + embeddings +
                                               ": its tokenizer and its weights disagree");
  std::size_t past = 0;
  std::optional<std::size_t> first;
  std::string added;
  std::size_t added_count = 0;
  for (std::size_t id = static_cast<std::size_t>(std::max(n_vocab, 0L)); id < vocab.size(); ++id) {
    if (ordinary(vocab.types[id])) {
      ++past;
      if (!first) first = id;
    } else if (vocab.types[id] != TokenType::Undefined) {
      if (++added_count <= 8) added += (added.empty() ? "" : ", ") + piece(id);
    }
  }
  if (past > 0)
    throw InputError::inconsistent(file, counted(past, "piece of its vocabulary has an id", "pieces of its vocabulary have ids") + " past the model's table (the first: " +
                                             piece(*first) + "), but " + embeddings + ": its tokenizer and its weights disagree");
  if (added_count == 0) return "";
  if (added_count > 8) added += " and " + std::to_string(added_count - 8) + " more";
  return file + ": " + counted(added_count, "added token has an id", "added tokens have ids") + " past the " + std::to_string(n_vocab) +
         " token embeddings of the model " + model + " " + id_range(n_vocab) + ", so a text that spells one is refused: " + added;
}

void require_tokenizer_fits(Vocabulary& vocab, long n_vocab, const std::string& model) {
  if (std::string past = check_tokenizer_fits(vocab, n_vocab, model); !past.empty()) vocab.warnings.push_back(std::move(past));
}

std::string unread_text_warning(const Vocabulary& vocab, const std::vector<std::int32_t>& ids, const std::string& what) {
  if (pieces_are_byte_level(vocab)) return "";
  std::size_t text_tokens = 0, unknown = 0, bytes = 0;
  std::string unknown_piece;
  for (const std::int32_t id : ids) {
    if (id < 0 || static_cast<std::size_t>(id) >= vocab.size()) continue;
    const TokenType type = token_type(vocab, id);
    const std::string& piece = vocab.pieces[static_cast<std::size_t>(id)];
    // A tokenizer.json's [UNK] is an added special token: the unknown token first.
    if (type == TokenType::Unknown || (vocab.unk && id == *vocab.unk)) {
      ++unknown, ++text_tokens;
      unknown_piece = piece;
      continue;
    }
    if (type == TokenType::Control || type == TokenType::UserDefined) continue;
    ++text_tokens;
    const bool byte_piece = piece.size() == 6 && piece.compare(0, 3, "<0x") == 0 && piece[5] == '>';
    if (type == TokenType::Byte || byte_piece) ++bytes;
  }
  if (text_tokens == 0 || 2 * (unknown + bytes) <= text_tokens) return "";
  std::string counts;
  if (unknown) counts = std::to_string(unknown) + " are the unknown token " + quoted_piece(unknown_piece);
  if (bytes) counts += (counts.empty() ? "" : " and ") + std::to_string(bytes) + " are byte fallbacks (<0xNN>)";
  return what + ": " + counts + " of its " + std::to_string(text_tokens) + " tokens: " + vocabulary_name(vocab) +
         " cannot spell most of the text (" + (unknown ? "what becomes the unknown token is lost to the model" :
                                                           "characters its vocabulary lacks, each split into bytes") +
         "); is the text in a language or script this model was trained on?";
}

}  // namespace attnviz
