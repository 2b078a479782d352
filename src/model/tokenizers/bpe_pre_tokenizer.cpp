#include "model/tokenizers/bpe_pre_tokenizer.hpp"

#include <array>
#include <memory>
#include <utility>

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "core/error.hpp"
#include "model/tokenizers/vocabulary.hpp"

namespace attnviz {

namespace {

// The patterns are llama.cpp's (src/llama-vocab.cpp, llm_tokenizer_bpe), as Hugging Face's
// tokenizer.json files give them. Where llama.cpp matches the GPT-2 pattern with a hand-written
// splitter (unicode_regex_split_custom_gpt2), that splitter behaves as the full GPT-2 pattern
// including its final "|\s+", so the full pattern is used here.
constexpr const char* kGpt2 =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";
constexpr const char* kLlama3 =
    R"((?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
constexpr const char* kQwen2 =
    R"((?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

struct NamedPreTokenizer {
  std::vector<std::string> names;
  BpePreTokenizer pre_tokenizer;
};

const std::vector<NamedPreTokenizer>& pre_tokenizer_table() {
  static const std::vector<NamedPreTokenizer> table = {
      {{"default"},
       {{R"([\p{P}\$\+<=>\^~\|]+)", kGpt2, R"(\p{N}+)", "[0-9][0-9][0-9]"}, false, false}},
      {{"gpt-2", "phi-2", "jina-es", "jina-de", "gigachat", "jina-v2-es", "jina-v2-de", "a.x-4.0",
        "mellum", "modern-bert", "exaone4", "mpt", "olmo", "jais", "trillion", "granite-docling"},
       {{kGpt2}, false, false}},
      {{"llama3", "llama-v3", "llama-bpe", "falcon3", "falcon-h1", "pixtral", "midm-2.0", "lfm2",
        "jina-v5-nano"},
       {{kLlama3}, true, true}},
      {{"dbrx", "smaug-bpe"}, {{kLlama3}, false, false}},
      {{"qwen2", "deepseek-r1-qwen", "kormo", "f2llmv2", "megrez", "stablelm2", "hunyuan",
        "solar-open"},
       {{kQwen2}, false, false}},
      {{"starcoder", "refact", "command-r", "smollm", "codeshell", "exaone", "minerva-7b", "mellum2"},
       {{R"(\p{N})", kGpt2}, false, false}},
      {{"falcon"}, {{R"([\p{P}\$\+<=>\^~\|`]+)", kGpt2, "[0-9][0-9][0-9]"}, false, false}},
  };
  return table;
}

struct CodeDeleter {
  void operator()(pcre2_code* code) const { pcre2_code_free(code); }
};
struct MatchDataDeleter {
  void operator()(pcre2_match_data* data) const { pcre2_match_data_free(data); }
};

std::string pcre2_message(int error_code) {
  std::array<PCRE2_UCHAR, 256> buffer{};
  pcre2_get_error_message(error_code, buffer.data(), buffer.size());
  return reinterpret_cast<const char*>(buffer.data());
}

InputError pattern_error(const std::string& pattern, const std::string& detail) {
  return InputError::inconsistent("pre-tokenizer regex " + pattern, detail);
}

// One compiled pattern and its match buffer.
class Regex {
 public:
  explicit Regex(const std::string& pattern) : pattern_(pattern) {
    int error_code = 0;
    PCRE2_SIZE error_offset = 0;
    code_.reset(pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(),
                              PCRE2_UTF | PCRE2_UCP, &error_code, &error_offset, nullptr));
    if (!code_) {
      throw pattern_error(pattern, "offset " + std::to_string(error_offset) + ": " + pcre2_message(error_code));
    }
    match_data_.reset(pcre2_match_data_create_from_pattern(code_.get(), nullptr));
  }

  // The first match in `subject` at or after `start` as [begin, end); {npos, npos} if none.
  std::pair<std::size_t, std::size_t> find(std::string_view subject, std::size_t start) const {
    const int rc = pcre2_match(code_.get(), reinterpret_cast<PCRE2_SPTR>(subject.data()), subject.size(), start,
                               PCRE2_NO_UTF_CHECK, match_data_.get(), nullptr);
    if (rc == PCRE2_ERROR_NOMATCH) return {std::string_view::npos, std::string_view::npos};
    if (rc < 0) throw pattern_error(pattern_, pcre2_message(rc));
    const PCRE2_SIZE* ovector = pcre2_get_ovector_pointer(match_data_.get());
    return {ovector[0], ovector[1]};
  }

 private:
  std::string pattern_;
  std::unique_ptr<pcre2_code, CodeDeleter> code_;
  std::unique_ptr<pcre2_match_data, MatchDataDeleter> match_data_;
};

// Splits `piece` into its matches and the runs between them; appends the non-empty parts.
void split_piece(const Regex& regex, std::string_view piece, std::vector<std::string_view>& parts) {
  std::size_t done = 0;
  std::size_t search = 0;
  while (search < piece.size()) {
    const auto [begin, end] = regex.find(piece, search);
    if (begin == std::string_view::npos) break;
    if (begin > done) parts.push_back(piece.substr(done, begin - done));
    if (end > begin) {
      parts.push_back(piece.substr(begin, end - begin));
      done = end;
      search = end;
    } else {
      // An empty match splits nothing: search again from the next character.
      search = begin + 1;
      while (search < piece.size() && (static_cast<unsigned char>(piece[search]) & 0xC0) == 0x80) ++search;
    }
  }
  if (done < piece.size()) parts.push_back(piece.substr(done));
}

}  // namespace

const BpePreTokenizer* find_bpe_pre_tokenizer(std::string_view pre) {
  for (const NamedPreTokenizer& entry : pre_tokenizer_table()) {
    for (const std::string& name : entry.names) {
      if (name == pre) return &entry.pre_tokenizer;
    }
  }
  return nullptr;
}

std::vector<std::string> gpt2_pre_tokenizers() {
  std::vector<std::string> names;
  for (const NamedPreTokenizer& entry : pre_tokenizer_table()) {
    names.insert(names.end(), entry.names.begin(), entry.names.end());
  }
  return names;
}

std::vector<std::string> split_words(std::string_view text, const BpePreTokenizer& pre_tokenizer) {
  std::vector<std::string_view> pieces = {text};
  if (text.empty()) pieces.clear();
  for (const std::string& pattern : pre_tokenizer.patterns) {
    const Regex regex(pattern);
    std::vector<std::string_view> parts;
    for (const std::string_view piece : pieces) split_piece(regex, piece, parts);
    pieces = std::move(parts);
  }
  return {pieces.begin(), pieces.end()};
}

}  // namespace attnviz
