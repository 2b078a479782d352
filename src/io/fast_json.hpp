// The fast path for reading JSON: simdjson (On-Demand) parses the text and builds the same
// nlohmann::json document the nlohmann parser would, and reads the large numeric members the
// caller names (embeddings, W_Q, ...) straight into matrices, skipping the document.
// It never reports errors: anything it does not fully vouch for (syntax, duplicate keys,
// depth, numbers beyond int64/uint64/double, control characters in strings, a root that is
// not an object) makes it return nullopt, and json_file then parses with nlohmann, which
// produces the exact error message. Does not validate the schema (input_schema does).
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <string_view>

#include "core/types.hpp"

namespace attnviz {

/// Bytes the fast path needs readable (not meaningful) after the text; json_file reserves
/// them in its read buffer so the text is parsed in place.
std::size_t fast_json_padding();

/// A parsed document: root members named as matrix members that are non-empty rectangular
/// lists of rows of finite float32-range numbers are in `matrices` (converted exactly as
/// read_matrix converts them) and absent from `root`; every other member is in `root`.
struct FastDocument {
  nlohmann::json root;
  std::map<std::string, Matrix> matrices;
};

/// The document `text` holds, `root` identical to nlohmann::json::parse(text) (same values,
/// same integer/unsigned/float kinds) but for `matrix_members`, or nullopt when the fast path
/// declines (see above; also when a named member is not such a matrix).
/// Parses in place when `readable` (bytes readable from text.data(), e.g. a buffer's capacity)
/// is at least text.size() + fast_json_padding(), else parses a padded copy.
std::optional<FastDocument> fast_parse_json(std::string_view text, std::size_t readable,
                                            const std::set<std::string>& matrix_members = {});

/// fast_parse_json(text, text.capacity(), matrix_members).
std::optional<FastDocument> fast_parse_json(const std::string& text, const std::set<std::string>& matrix_members = {});

}  // namespace attnviz
