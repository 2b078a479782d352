// A template's integers are 64-bit, as the real templates' counts and indices need; Python's
// are unbounded and JavaScript's (HF's renderer) are doubles. Where a result leaves the 64-bit
// range attnviz refuses it (std::invalid_argument, which the interpreter turns into a
// TemplateError at the expression) rather than wrap it or hit C++'s undefined behaviour.
#pragma once

#include <cstdint>
#include <string>

namespace attnviz::jinja {

/// a + b, a - b, a * b and -a; throws std::invalid_argument naming the operation when the
/// exact result is beyond 64-bit integers.
std::int64_t checked_add(std::int64_t a, std::int64_t b);
std::int64_t checked_subtract(std::int64_t a, std::int64_t b);
std::int64_t checked_multiply(std::int64_t a, std::int64_t b);
std::int64_t checked_negate(std::int64_t a);

/// a % b with C++'s (and JavaScript's) sign of the dividend, as HF's renderer computes it;
/// b != 0 (the caller names a zero). INT64_MIN % -1 is 0, not undefined.
std::int64_t remainder_of(std::int64_t a, std::int64_t b);

/// x truncated toward zero; throws std::invalid_argument when x is NaN, infinite or beyond
/// 64-bit integers ("1e+300 is beyond 64-bit integers").
std::int64_t integer_from_double(double x);

/// How many of start, start + step, start + 2·step, … lie before stop (Python's len(range(start,
/// stop, step))), computed without overflow; step != 0.
std::uint64_t range_length(std::int64_t start, std::int64_t stop, std::int64_t step);

/// start + k·step for k < range_length(start, stop, step): always a 64-bit integer then.
std::int64_t range_item(std::int64_t start, std::int64_t step, std::uint64_t k);

}  // namespace attnviz::jinja
