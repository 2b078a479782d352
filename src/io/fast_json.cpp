#include "io/fast_json.hpp"

#include <simdjson.h>

#include <cmath>
#include <limits>

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
    if (!std::isfinite(number) || std::fabs(number) > std::numeric_limits<Scalar>::max()) return false;
    if (number == 0 && std::signbit(number)) return false;  // "-0" is +0 in nlohmann, "-0.0" is -0
    out(r, c++) = static_cast<Scalar>(number);
  }
  return c == out.cols();
}

// The shape comes from counting rows and the first row's items (a pass over the structure
// only), so the numbers are written once, in place.
bool read_matrix_member(od::value value, Matrix& out) {
  od::array rows;
  std::size_t n_rows = 0;
  std::size_t n_cols = 0;
  if (value.get_array().get(rows) || rows.count_elements().get(n_rows) || n_rows == 0) return false;
  Eigen::Index r = 0;
  for (auto element : rows) {
    od::array row;
    if (element.get_array().get(row)) return false;
    if (r == 0) {  // count_elements() rewinds the row afterwards
      if (row.count_elements().get(n_cols) || n_cols == 0) return false;
      out.resize(static_cast<Eigen::Index>(n_rows), static_cast<Eigen::Index>(n_cols));
    }
    if (!read_row(row, out, r++)) return false;
  }
  return true;
}

bool convert_object(od::object object, int depth, json& out, FastDocument* document = nullptr,
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
      Matrix& matrix = document->matrices[key];
      if (matrix.size() != 0 || !read_matrix_member(item, matrix)) return false;
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
  if (!convert_object(root, 1, out.root, &out, &matrix_members)) return std::nullopt;
  // simdjson 3.0 has no document::at_end(): current_location() fails exactly when the whole
  // text was consumed, so success means trailing content (which nlohmann refuses).
  const char* rest = nullptr;
  if (!document.current_location().get(rest)) return std::nullopt;
  return out;
}

}  // namespace

std::size_t fast_json_padding() { return simdjson::SIMDJSON_PADDING; }

std::optional<FastDocument> fast_parse_json(const std::string& text, const std::set<std::string>& matrix_members) {
  try {
    if (text.capacity() >= text.size() + fast_json_padding()) {
      return parse_padded(simdjson::padded_string_view(text.data(), text.size(), text.capacity()), matrix_members);
    }
    const simdjson::padded_string copy(text);
    return parse_padded(copy, matrix_members);
  } catch (const std::exception&) {  // simdjson_error, bad_alloc: let the nlohmann path decide
    return std::nullopt;
  }
}

}  // namespace attnviz
