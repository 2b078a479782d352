#include "io/fast_json.hpp"

#include <simdjson.h>

#include <Eigen/Core>
#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <vector>

#include "core/parallel_for.hpp"
#include "core/product_threads.hpp"
#include "io/json_reader.hpp"

namespace attnviz {

namespace {

using nlohmann::json;
namespace od = simdjson::ondemand;

// attnviz's formats nest 4 levels; anything deeper goes to nlohmann, which refuses nesting
// beyond kMaxJsonDepth (64) with its own message.
constexpr int kMaxFastDepth = 16;

bool convert(od::value value, int depth, json& out);

// simdjson 3.0.1 reads a number literal of more than 19 significant digits as 0 (found by an
// adversarial test: "0.50000000000000000000" became 0). Such literals go to nlohmann, which
// reads them exactly. Short literals, the usual case, are judged by their length alone.
constexpr std::size_t kMaxFastDigits = 19;
constexpr std::size_t kShortLiteral = 20;

bool too_many_digits(std::string_view literal) {
  if (literal.size() <= kShortLiteral) return false;
  // Python's repr of a small weight ("-0.0012345678901234567", 23 characters) is common: once
  // the sign, leading zeros and point are skipped, at most 19 characters cannot hold 20
  // digits. Checked before counting, which took 1/5 of matrix parsing (P3 profile).
  std::size_t prefix = 0;
  while (prefix < literal.size() && (literal[prefix] == '0' || literal[prefix] == '.' || literal[prefix] == '-')) {
    ++prefix;
  }
  if (literal.size() - prefix <= kMaxFastDigits) return false;
  std::size_t significant = 0;
  for (const char c : literal) {
    if (c == 'e' || c == 'E') break;
    if (c >= '1' && c <= '9') ++significant;
    if (c == '0' && significant != 0) ++significant;  // leading zeros are not significant
  }
  return significant > kMaxFastDigits;
}

// nlohmann keeps non-negative integer literals as number_unsigned and negative ones ("-0"
// included) as number_integer; mirror that so the documents are identical, not just equal.
bool convert_number(od::value value, json& out) {
  if (too_many_digits(value.raw_json_token())) return false;
  const bool negative = value.is_negative();
  od::number number;
  if (value.get_number().get(number)) return false;  // e.g. 1e400, integers beyond 64 bits
  switch (number.get_number_type()) {
    case od::number_type::floating_point_number: out = number.get_double(); return true;
    case od::number_type::unsigned_integer: out = number.get_uint64(); return true;
    case od::number_type::signed_integer:
      if (negative) {
        out = number.get_int64();
      } else {
        out = static_cast<std::uint64_t>(number.get_int64());
      }
      return true;
  }
  return false;
}

// Control characters (raw or escaped) are rare in tokens and raw ones are invalid JSON that
// simdjson accepts, so any of them sends the file to nlohmann.
bool plain_text(std::string_view text) {
  for (const char c : text) {
    if (static_cast<unsigned char>(c) < 0x20) return false;
  }
  return true;
}

bool convert_string(od::value value, json& out) {
  std::string_view text;
  if (value.get_string().get(text) || !plain_text(text)) return false;
  out = std::string(text);
  return true;
}

bool convert_array(od::array array, int depth, json& out) {
  out = json::array();
  json::array_t& items = out.get_ref<json::array_t&>();
  for (auto element : array) {
    od::value item;
    if (element.get(item)) return false;
    items.emplace_back();
    if (!convert(item, depth + 1, items.back())) return false;
  }
  return true;
}

// Row r of a matrix member, into out.row(r) when it has out.cols() numbers; read_scalar's
// rules (finite, within float32 range, double rounded to float), anything else declines.
bool read_row(od::array items, Matrix& out, Eigen::Index r) {
  Eigen::Index c = 0;
  for (auto element : items) {
    od::value item;
    double number = 0;
    if (c == out.cols() || element.get(item) || too_many_digits(item.raw_json_token()) ||
        item.get_double().get(number)) {
      return false;
    }
    if (!std::isfinite(number) || !rounds_to_finite_float32(number)) return false;
    if (number == 0 && std::signbit(number)) return false;  // "-0" is +0 in nlohmann, "-0.0" is -0
    out(r, c++) = static_cast<Scalar>(number);
  }
  return c == out.cols();
}

// A matrix member, parsed after the walk over the document so that the big matrices (W_Q,
// W_K, W_V: most of a weights file's numbers) are read on several threads at once. The walk
// only finds each row's text; the rows are then parsed in parallel, each as its own document.
struct PendingMatrix {
  std::string key;
  std::vector<std::string_view> rows;
};

// The buffer the text lives in: simdjson may read up to SIMDJSON_PADDING bytes past a text's
// end, which the rest of the buffer provides for a row's text too.
struct Buffer {
  const char* end_of_capacity = nullptr;
};

bool find_rows(od::array rows, std::vector<std::string_view>& out) {
  for (auto element : rows) {
    od::array row;
    std::string_view text;
    if (element.get_array().get(row) || row.raw_json().get(text)) return false;
    out.push_back(text);
  }
  return !out.empty();
}

bool parse_row(od::parser& parser, std::string_view text, const Buffer& buffer, Matrix& out, Eigen::Index r) {
  const std::size_t capacity = static_cast<std::size_t>(buffer.end_of_capacity - text.data());
  od::document document;
  od::array items;
  const char* rest = nullptr;
  return !parser.iterate(simdjson::padded_string_view(text.data(), text.size(), capacity)).get(document) &&
         !document.get_array().get(items) && read_row(items, out, r) &&
         document.current_location().get(rest);  // fails exactly when all was consumed
}

// Threads: Eigen's thread budget (--threads); each row is written in place by one thread.
// Plain threads, not OpenMP: see core/parallel_for.hpp.
bool parse_matrices(const std::vector<PendingMatrix>& pending, const Buffer& buffer,
                    std::map<std::string, Matrix>& matrices) {
  std::vector<std::pair<Matrix*, std::size_t>> jobs;  // (matrix, row)
  for (const PendingMatrix& matrix : pending) {
    std::size_t n_cols = 0;
    {
      od::parser counter;
      od::document first;
      od::array items;
      const std::string_view text = matrix.rows.front();
      const std::size_t capacity = static_cast<std::size_t>(buffer.end_of_capacity - text.data());
      if (counter.iterate(simdjson::padded_string_view(text.data(), text.size(), capacity)).get(first) ||
          first.get_array().get(items) || items.count_elements().get(n_cols) || n_cols == 0) {
        return false;
      }
    }
    Matrix& out = matrices[matrix.key];
    out.resize(static_cast<Eigen::Index>(matrix.rows.size()), static_cast<Eigen::Index>(n_cols));
    for (std::size_t r = 0; r < matrix.rows.size(); ++r) jobs.emplace_back(&out, r);
  }
  std::vector<std::pair<std::string_view, std::pair<Matrix*, std::size_t>>> work;
  std::size_t next = 0;
  for (const PendingMatrix& matrix : pending) {
    for (const std::string_view row : matrix.rows) work.emplace_back(row, jobs[next++]);
  }
  // A second thread from 1 MiB of row text (about a millisecond of number parsing) only: a
  // short text's dump is parsed faster than a thread starts.
  constexpr double kParseBytesPerThread = 1 << 20;
  double bytes = 0;
  for (const auto& row : work) bytes += static_cast<double>(row.first.size());
  std::atomic<bool> failed{false};
  parallel_for_blocks(work.size(), threads_for_work(bytes, Eigen::nbThreads(), kParseBytesPerThread), [&](std::size_t begin, std::size_t end) {
    try {
      od::parser parser;  // one per thread, reused for every row it parses
      for (std::size_t i = begin; i < end && !failed; ++i) {
        const auto& [text, target] = work[i];
        if (!parse_row(parser, text, buffer, *target.first, static_cast<Eigen::Index>(target.second))) failed = true;
      }
    } catch (...) {  // nothing may leave a worker thread; a failure means the nlohmann path
      failed = true;
    }
  });
  return !failed;
}

bool convert_object(od::object object, int depth, json& out, std::vector<PendingMatrix>* pending = nullptr,
                    const std::set<std::string>* matrix_members = nullptr) {
  out = json::object();
  json::object_t& members = out.get_ref<json::object_t&>();
  for (auto field : object) {
    std::string_view key_view;
    od::value item;
    if (field.unescaped_key().get(key_view) || !plain_text(key_view) || field.value().get(item)) return false;
    std::string key(key_view);
    if (members.count(key) != 0) return false;  // a duplicate key: nlohmann names it
    if (matrix_members != nullptr && matrix_members->count(key) != 0) {
      for (const PendingMatrix& seen : *pending) {
        if (seen.key == key) return false;  // a duplicate matrix key
      }
      od::array rows;
      pending->push_back({std::move(key), {}});
      if (item.get_array().get(rows) || !find_rows(rows, pending->back().rows)) return false;
      continue;
    }
    if (!convert(item, depth + 1, members[std::move(key)])) return false;
  }
  return true;
}

bool convert(od::value value, int depth, json& out) {
  if (depth > kMaxFastDepth) return false;
  od::json_type type;
  if (value.type().get(type)) return false;
  switch (type) {
    case od::json_type::object: {
      od::object object;
      return !value.get_object().get(object) && convert_object(object, depth, out);
    }
    case od::json_type::array: {
      od::array array;
      return !value.get_array().get(array) && convert_array(array, depth, out);
    }
    case od::json_type::number: return convert_number(value, out);
    case od::json_type::string: return convert_string(value, out);
    case od::json_type::boolean: {
      bool flag = false;
      if (value.get_bool().get(flag)) return false;
      out = flag;
      return true;
    }
    case od::json_type::null: {
      bool is_null = false;
      if (value.is_null().get(is_null) || !is_null) return false;
      out = nullptr;
      return true;
    }
  }
  return false;
}

std::optional<FastDocument> parse_padded(simdjson::padded_string_view text, const std::set<std::string>& matrix_members) {
  od::parser parser;
  od::document document;
  od::object root;
  if (parser.iterate(text).get(document) || document.get_object().get(root)) return std::nullopt;
  FastDocument out;
  std::vector<PendingMatrix> pending;
  if (!convert_object(root, 1, out.root, &pending, &matrix_members)) return std::nullopt;
  // simdjson 3.0 has no document::at_end(): current_location() fails exactly when the whole
  // text was consumed, so success means trailing content (which nlohmann refuses).
  const char* rest = nullptr;
  if (!document.current_location().get(rest)) return std::nullopt;
  if (!parse_matrices(pending, Buffer{text.data() + text.capacity()}, out.matrices)) return std::nullopt;
  return out;
}

}  // namespace

std::size_t fast_json_padding() { return simdjson::SIMDJSON_PADDING; }

std::optional<FastDocument> fast_parse_json(std::string_view text, std::size_t readable,
                                            const std::set<std::string>& matrix_members) {
  try {
    if (readable >= text.size() + fast_json_padding()) {
      return parse_padded(simdjson::padded_string_view(text.data(), text.size(), readable), matrix_members);
    }
    const simdjson::padded_string copy(text);
    return parse_padded(copy, matrix_members);
  } catch (const std::exception&) {  // simdjson_error, bad_alloc: let the nlohmann path decide
    return std::nullopt;
  }
}

std::optional<FastDocument> fast_parse_json(const std::string& text, const std::set<std::string>& matrix_members) {
  return fast_parse_json(text, text.capacity(), matrix_members);
}

}  // namespace attnviz
