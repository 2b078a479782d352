// The body of `attnviz serve`'s POST /api/run and /api/tokenize (issue 36): a JSON object read
// strictly into the Options a command line would give, with the command line's words for faults.
#pragma once

#include <string>

#include "cli/options.hpp"

namespace attnviz {

/// `base` (the server's model, threads, memory) with the request's members: "text" (UTF-8) or
/// "token_ids" (whole numbers from 0), "layers" (as --layers: "all", "2", "0,3", "1-4"),
/// "measure" ("weights", "norms", "alti") and "generate" (0 … 4096). `tokenize_only` takes "text"
/// alone. Throws InputError "request: …" for a body that is not JSON (syntax with line and
/// column, a duplicate key, a NUL byte: parse_json_text), UsageError naming the member (as
/// "--text: …", "unknown member /foo") for a body that is no object, an unknown member, a value of
/// the wrong kind or range, text that is not UTF-8, neither or both of text and token_ids.
Options serve_request(const Options& base, const std::string& body, bool tokenize_only);

}  // namespace attnviz
