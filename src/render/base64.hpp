// Base64 (RFC 4648 §4, with '=' padding) for bytes embedded in text: PNG rasters in SVG data
// URLs and the weights inside the HTML report.
#pragma once

#include <string>
#include <string_view>

namespace attnviz {

/// The base64 text of `bytes` (alphabet A–Z a–z 0–9 + /, padded with '=').
std::string base64_encode(std::string_view bytes);

}  // namespace attnviz
