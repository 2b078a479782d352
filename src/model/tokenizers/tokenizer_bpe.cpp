#include "model/tokenizers/tokenizer_bpe.hpp"

#include <array>
#include <cstdlib>
#include <queue>
#include <stdexcept>
#include <string>
#include <unordered_map>

#include <utf8proc.h>

#include "core/error.hpp"
#include "core/utf8.hpp"
#include "model/tokenizers/added_vocabulary.hpp"
#include "model/tokenizers/bpe_pre_tokenizer.hpp"
#include "model/tokenizers/piece_index.hpp"
#include "model/tokenizers/text_fragments.hpp"
#include "model/tokenizers/tokenizer_hf.hpp"
#include "model/tokenizers/utf8_chars.hpp"

namespace attnviz {

namespace {

// GPT-2's bytes_to_unicode (openai/gpt-2, src/encoder.py): the printable bytes '!'..'~',
// '¡'..'¬' and '®'..'ÿ' stand for themselves; the other 68 bytes, in order, for U+0100 + n.
// So every byte is one visible character and a piece never holds a space or a control byte.
std::array<char32_t, 256> make_byte_to_code_point() {
  std::array<char32_t, 256> table{};
  char32_t next = 0x100;
  for (int byte = 0; byte < 256; ++byte) {
    const bool printable = (byte >= 0x21 && byte <= 0x7E) || (byte >= 0xA1 && byte <= 0xAC) || byte >= 0xAE;
    table[byte] = printable ? static_cast<char32_t>(byte) : next++;
  }
  return table;
}

const std::array<std::string, 256>& byte_to_unicode() {
  static const std::array<std::string, 256> table = [] {
    const std::array<char32_t, 256> code_points = make_byte_to_code_point();
    std::array<std::string, 256> utf8;
    for (int byte = 0; byte < 256; ++byte) utf8[byte] = encode_utf8(std::u32string(1, code_points[byte]));
    return utf8;
  }();
  return table;
}

const std::unordered_map<char32_t, char>& unicode_to_byte() {
  static const std::unordered_map<char32_t, char> table = [] {
    const std::array<char32_t, 256> code_points = make_byte_to_code_point();
    std::unordered_map<char32_t, char> map;
    for (int byte = 0; byte < 256; ++byte) map.emplace(code_points[byte], static_cast<char>(byte));
    return map;
  }();
  return table;
}

std::string byte_encode(std::string_view word) {
  std::string encoded;
  for (const char c : word) encoded += byte_to_unicode()[static_cast<unsigned char>(c)];
  return encoded;
}

// "a b" -> rank (its index in tokenizer.ggml.merges); the first of duplicates wins.
class MergeRanks {
 public:
  explicit MergeRanks(const std::vector<std::string>& merges) {
    ranks_.reserve(merges.size());
    for (std::size_t i = 0; i < merges.size(); ++i) ranks_.emplace(merges[i], static_cast<int>(i));
  }
  int rank(std::string_view left, std::string_view right) const {
    key_.assign(left).append(" ").append(right);
    const auto it = ranks_.find(key_);
    return it == ranks_.end() ? -1 : it->second;
  }

 private:
  std::unordered_map<std::string_view, int> ranks_;
  mutable std::string key_;
};

struct Symbol {
  std::size_t begin = 0;
  std::size_t length = 0;  // 0 once merged into its left neighbour
  int prev = -1;
  int next = -1;
};

struct Bigram {
  int left = 0;
  int right = 0;
  int rank = 0;
  std::string text;  // the pair as queued; a pair changed since is stale
};

// Lowest rank first; among equal ranks the leftmost pair (llama.cpp's llm_bigram_bpe).
struct LaterMerge {
  bool operator()(const Bigram& a, const Bigram& b) const {
    return a.rank > b.rank || (a.rank == b.rank && a.left > b.left);
  }
};

// Merges one byte-encoded word.
class WordMerger {
 public:
  WordMerger(const MergeRanks& ranks, std::string_view word) : ranks_(ranks), word_(word) {
    for (std::size_t offset = 0; offset < word.size();) {
      const std::size_t length = utf8_char_length_at(word, offset);
      const int index = static_cast<int>(symbols_.size());
      symbols_.push_back({offset, length, index - 1, offset + length == word.size() ? -1 : index + 1});
      offset += length;
    }
  }

  // The merged symbols' texts, in order.
  std::vector<std::string_view> run() {
    for (int i = 1; i < static_cast<int>(symbols_.size()); ++i) add_bigram(i - 1, i);
    while (!queue_.empty()) {
      const Bigram bigram = queue_.top();
      queue_.pop();
      Symbol& left = symbols_[bigram.left];
      Symbol& right = symbols_[bigram.right];
      if (left.length == 0 || right.length == 0 || pair_text(left, right) != bigram.text) continue;
      left.length += right.length;
      right.length = 0;
      left.next = right.next;
      if (right.next >= 0) symbols_[right.next].prev = bigram.left;
      add_bigram(left.prev, bigram.left);
      add_bigram(bigram.left, left.next);
    }
    std::vector<std::string_view> parts;
    for (const Symbol& symbol : symbols_) {
      if (symbol.length > 0) parts.push_back(word_.substr(symbol.begin, symbol.length));
    }
    return parts;
  }

 private:
  std::string_view text(const Symbol& symbol) const { return word_.substr(symbol.begin, symbol.length); }
  std::string pair_text(const Symbol& left, const Symbol& right) const {
    return std::string(text(left)) + std::string(text(right));
  }

  void add_bigram(int left, int right) {
    if (left == -1 || right == -1) return;
    const int rank = ranks_.rank(text(symbols_[left]), text(symbols_[right]));
    if (rank < 0) return;
    queue_.push({left, right, rank, pair_text(symbols_[left], symbols_[right])});
  }

  const MergeRanks& ranks_;
  std::string_view word_;
  std::vector<Symbol> symbols_;
  std::priority_queue<Bigram, std::vector<Bigram>, LaterMerge> queue_;
};

// A merged symbol's id, or (not a piece) one id per byte, skipping bytes without a token.
// Where a symbol is not a piece llama.cpp looks up each byte of its UTF-8 spelling instead;
// with all 256 byte spellings in the vocabulary, as byte-level ones have, every symbol is a
// piece and neither fallback runs.
void emit(const PieceIndex& index, std::string_view part, std::vector<std::int32_t>& ids) {
  if (const auto id = index.find(part)) {
    ids.push_back(*id);
    return;
  }
  for (const char byte : gpt2_piece_bytes(part)) {
    if (const auto id = index.find(byte_to_unicode()[static_cast<unsigned char>(byte)])) ids.push_back(*id);
  }
}

// The sections of `text`, each a run of text (valid UTF-8) or an added token's id: for a
// tokenizer.json, its added tokens split out as the tokenizers library does, its normalizer
// (NFC or none) applied; for a GGUF, its user-defined tokens split out as llama.cpp does, bytes
// that are not UTF-8 read as U+FFFD.
std::vector<std::pair<std::string, std::optional<std::int32_t>>> sections(const Vocabulary& vocab, std::string_view text,
                                                                         bool parse_special) {
  std::vector<std::pair<std::string, std::optional<std::int32_t>>> out;
  if (vocab.hf_added_tokens) {
    const auto normalize = [&vocab](const std::u32string& raw) { return hf_normalize(vocab.hf.normalizer, raw); };
    for (const AddedSection& section : extract_added(vocab.hf, text, normalize, parse_special)) out.emplace_back(encode_utf8(section.text), section.token);
    return out;
  }
  for (const TextFragment& fragment : split_at_special_tokens(vocab, text, parse_special))
    out.emplace_back(fragment.token ? std::string(fragment.text) : encode_utf8(decode_utf8(fragment.text)), fragment.token);
  return out;
}

const BpePreTokenizer& pre_tokenizer_of(const Vocabulary& vocab) {
  const std::string pre = vocab.pre.empty() ? "default" : vocab.pre;
  const BpePreTokenizer* pre_tokenizer = find_bpe_pre_tokenizer(pre);
  if (!pre_tokenizer) {
    std::string supported;
    for (const std::string& name : gpt2_pre_tokenizers()) supported += (supported.empty() ? "" : ", ") + name;
    throw InputError::unsupported_tokenizer(vocabulary_name(vocab),
                                            "pre-tokenizer \"" + pre + "\" (tokenizer.ggml.pre)", supported);
  }
  return *pre_tokenizer;
}

}  // namespace

const std::string& gpt2_byte_piece(unsigned char byte) { return byte_to_unicode()[byte]; }

std::string gpt2_piece_bytes(std::string_view piece) {
  std::string bytes;
  for (const char32_t code_point : decode_utf8(piece)) {
    const auto it = unicode_to_byte().find(code_point);
    if (it != unicode_to_byte().end()) {
      bytes += it->second;
    } else {
      bytes += encode_utf8(std::u32string(1, code_point));
    }
  }
  return bytes;
}

std::vector<std::int32_t> tokenize_bpe(const Vocabulary& vocab, std::string_view text, bool add_special, bool parse_special) {
  const BpePreTokenizer& pre_tokenizer = pre_tokenizer_of(vocab);
  std::vector<std::int32_t> ids;
  if (add_special && vocab.add_bos && vocab.bos) ids.push_back(*vocab.bos);
  const PieceIndex index(vocab);
  const MergeRanks ranks(vocab.merges);
  for (const auto& [section, token] : sections(vocab, text, parse_special)) {
    if (token) {
      ids.push_back(*token);
      continue;
    }
    for (const std::string& word : split_words(section, pre_tokenizer)) {
      const std::string encoded = byte_encode(word);
      const std::optional<std::int32_t> whole = pre_tokenizer.ignore_merges ? index.find(encoded) : std::nullopt;
      if (whole) {
        ids.push_back(*whole);
        continue;
      }
      for (const std::string_view part : WordMerger(ranks, encoded).run()) emit(index, part, ids);
    }
  }
  if (add_special && vocab.add_eos && vocab.eos) ids.push_back(*vocab.eos);
  return ids;
}

}  // namespace attnviz
