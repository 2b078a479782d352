// The fast path for reading JSON: simdjson (On-Demand) parses the text and builds the same
// nlohmann::json document the nlohmann parser would, ~5x faster on number-heavy files.
// It never reports errors: anything it does not fully vouch for (syntax, duplicate keys,
// depth, numbers beyond int64/uint64/double, control characters in strings, a root that is
// not an object) makes it return nullopt, and json_file then parses with nlohmann, which
// produces the exact error message. Does not validate the schema (input_schema does).
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace attnviz {

/// Bytes the fast path needs readable (not meaningful) after the text; json_file reserves
/// them in its read buffer so the text is parsed in place.
std::size_t fast_json_padding();

/// The document `text` holds, identical to nlohmann::json::parse(text) (same values, same
/// integer/unsigned/float kinds), or nullopt when the fast path declines (see above).
/// Parses in place when text.capacity() >= text.size() + fast_json_padding(), else copies.
std::optional<nlohmann::json> fast_parse_json(const std::string& text);

}  // namespace attnviz
