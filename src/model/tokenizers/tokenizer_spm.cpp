#include "model/tokenizers/tokenizer_spm.hpp"

#include <cstdio>
#include <queue>
#include <string>

#include "core/error.hpp"
#include "model/tokenizers/piece_index.hpp"
#include "model/tokenizers/text_fragments.hpp"
#include "model/tokenizers/utf8_chars.hpp"

namespace attnviz {

namespace {

constexpr std::string_view kSpaceMarker = "\xE2\x96\x81";  // U+2581, SentencePiece's visible space

// A run of the text that is one piece so far; merged-away symbols keep length 0.
struct Symbol {
  std::size_t begin = 0;
  std::size_t length = 0;
  int prev = -1;
  int next = -1;
};

// Two adjacent symbols whose concatenation is a piece with `score`; `length` is their joint
// length when queued, so a pair changed by an earlier merge is recognised as stale.
struct Bigram {
  int left = 0;
  int right = 0;
  float score = 0;
  std::size_t length = 0;
};

// Highest score first; among equal scores the leftmost pair (llama.cpp's llm_bigram_spm).
struct LowerPriority {
  bool operator()(const Bigram& a, const Bigram& b) const {
    return a.score < b.score || (a.score == b.score && a.left > b.left);
  }
};

std::string escape_spaces(std::string_view text) {
  std::string escaped;
  escaped.reserve(text.size());
  for (const char c : text) {
    if (c == ' ') {
      escaped += kSpaceMarker;
    } else {
      escaped += c;
    }
  }
  return escaped;
}

std::string byte_piece(unsigned char byte) {
  char piece[8];
  std::snprintf(piece, sizeof piece, "<0x%02X>", byte);
  return piece;
}

class SpmMerger {
 public:
  SpmMerger(const Vocabulary& vocab, const PieceIndex& index, std::string text)
      : vocab_(vocab), index_(index), text_(std::move(text)) {}

  // The text's pieces, appended to `ids`.
  void run(std::vector<std::int32_t>& ids) {
    split_characters();
    for (int i = 1; i < static_cast<int>(symbols_.size()); ++i) try_add_bigram(i - 1, i);
    merge_best_pairs();
    for (int i = symbols_.empty() ? -1 : 0; i != -1; i = symbols_[i].next) emit(symbols_[i], ids);
  }

 private:
  void split_characters() {
    for (std::size_t offset = 0; offset < text_.size();) {
      Symbol symbol;
      symbol.begin = offset;
      symbol.length = utf8_char_length_at(text_, offset);
      offset += symbol.length;
      symbol.prev = static_cast<int>(symbols_.size()) - 1;
      symbol.next = offset == text_.size() ? -1 : static_cast<int>(symbols_.size()) + 1;
      symbols_.push_back(symbol);
    }
  }

  void try_add_bigram(int left, int right) {
    if (left == -1 || right == -1) return;
    const std::size_t length = symbols_[left].length + symbols_[right].length;
    const auto id = index_.find(std::string_view(text_).substr(symbols_[left].begin, length));
    if (!id) return;
    queue_.push({left, right, score(*id), length});
  }

  void merge_best_pairs() {
    while (!queue_.empty()) {
      const Bigram bigram = queue_.top();
      queue_.pop();
      Symbol& left = symbols_[bigram.left];
      Symbol& right = symbols_[bigram.right];
      if (left.length == 0 || right.length == 0 || left.length + right.length != bigram.length) {
        continue;  // one side was merged elsewhere since this pair was queued
      }
      left.length += right.length;
      right.length = 0;
      left.next = right.next;
      if (right.next >= 0) symbols_[right.next].prev = bigram.left;
      try_add_bigram(left.prev, bigram.left);
      try_add_bigram(bigram.left, left.next);
    }
  }

  // A piece of the vocabulary, or else one byte token per byte; SentencePiece without byte
  // fallback (no <0xXX> pieces) gives one unknown token per character instead.
  void emit(const Symbol& symbol, std::vector<std::int32_t>& ids) const {
    const std::string_view text = std::string_view(text_).substr(symbol.begin, symbol.length);
    if (const auto id = index_.find(text)) {
      ids.push_back(*id);
      return;
    }
    std::vector<std::int32_t> bytes;
    for (const char c : text) {
      auto id = index_.find(byte_piece(static_cast<unsigned char>(c)));
      if (!id) id = index_.find(std::string_view(&c, 1));
      if (!id) return emit_unknown(text, ids);
      bytes.push_back(*id);
    }
    ids.insert(ids.end(), bytes.begin(), bytes.end());
  }

  void emit_unknown(std::string_view text, std::vector<std::int32_t>& ids) const {
    if (!vocab_.unk) {
      throw InputError::inconsistent(
          vocabulary_name(vocab_),
          "\"" + std::string(text) + "\" has no token, no byte tokens and there is no unknown token");
    }
    ids.push_back(*vocab_.unk);
  }

  float score(std::int32_t id) const {
    return static_cast<std::size_t>(id) < vocab_.scores.size() ? vocab_.scores[id] : 0.0f;
  }

  const Vocabulary& vocab_;
  const PieceIndex& index_;
  const std::string text_;
  std::vector<Symbol> symbols_;
  std::priority_queue<Bigram, std::vector<Bigram>, LowerPriority> queue_;
};

}  // namespace

std::vector<std::int32_t> tokenize_spm(const Vocabulary& vocab, std::string_view text, bool add_special, bool parse_special) {
  std::vector<std::int32_t> ids;
  if (add_special && vocab.add_bos && vocab.bos) ids.push_back(*vocab.bos);
  const PieceIndex index(vocab);
  bool after_token = true;  // the dummy space goes before the text and after each special token
  for (const TextFragment& fragment : split_at_special_tokens(vocab, text, parse_special)) {
    if (fragment.token) {
      ids.push_back(*fragment.token);
    } else {
      const std::string prefixed = (vocab.add_space_prefix && after_token ? " " : "") + std::string(fragment.text);
      SpmMerger(vocab, index, escape_spaces(prefixed)).run(ids);
    }
    after_token = fragment.token.has_value();
  }
  if (add_special && vocab.add_eos && vocab.eos) ids.push_back(*vocab.eos);
  return ids;
}

}  // namespace attnviz
