#include "chat/jinja_integers.hpp"

#include <cmath>
#include <cstdio>
#include <limits>
#include <stdexcept>

namespace attnviz::jinja {
namespace {

[[noreturn]] void beyond(const std::string& what) {
  throw std::invalid_argument(what + " is beyond 64-bit integers (-9223372036854775808 to 9223372036854775807)");
}

// |step| as an unsigned number: -INT64_MIN has no int64 form.
std::uint64_t magnitude(std::int64_t step) {
  return step >= 0 ? static_cast<std::uint64_t>(step) : static_cast<std::uint64_t>(-(step + 1)) + 1;
}

}  // namespace

std::int64_t checked_add(std::int64_t a, std::int64_t b) {
  std::int64_t out = 0;
  if (__builtin_add_overflow(a, b, &out)) beyond(std::to_string(a) + " + " + std::to_string(b));
  return out;
}

std::int64_t checked_subtract(std::int64_t a, std::int64_t b) {
  std::int64_t out = 0;
  if (__builtin_sub_overflow(a, b, &out)) beyond(std::to_string(a) + " - " + std::to_string(b));
  return out;
}

std::int64_t checked_multiply(std::int64_t a, std::int64_t b) {
  std::int64_t out = 0;
  if (__builtin_mul_overflow(a, b, &out)) beyond(std::to_string(a) + " * " + std::to_string(b));
  return out;
}

std::int64_t checked_negate(std::int64_t a) {
  if (a == std::numeric_limits<std::int64_t>::min()) beyond("-(" + std::to_string(a) + ")");
  return -a;
}

std::int64_t remainder_of(std::int64_t a, std::int64_t b) { return b == -1 ? 0 : a % b; }

std::int64_t integer_from_double(double x) {
  // 2^63 is exact in a double; every double below it and at or above -2^63 truncates into range.
  constexpr double kTwoTo63 = 9223372036854775808.0;
  if (!std::isfinite(x) || !(x < kTwoTo63 && x >= -kTwoTo63)) {
    char text[32];
    std::snprintf(text, sizeof text, "%g", x);
    beyond(text);
  }
  return static_cast<std::int64_t>(x);
}

std::uint64_t range_length(std::int64_t start, std::int64_t stop, std::int64_t step) {
  if (step > 0 ? stop <= start : stop >= start) return 0;
  // The distance fits an unsigned 64-bit number whatever the signs; unsigned wrap-around is defined.
  const std::uint64_t distance = step > 0 ? static_cast<std::uint64_t>(stop) - static_cast<std::uint64_t>(start)
                                          : static_cast<std::uint64_t>(start) - static_cast<std::uint64_t>(stop);
  return (distance - 1) / magnitude(step) + 1;
}

std::int64_t range_item(std::int64_t start, std::int64_t step, std::uint64_t k) {
  // Computed modulo 2^64 and converted back (C++20 defines the conversion): exact, since the
  // true value lies between start and stop.
  return static_cast<std::int64_t>(static_cast<std::uint64_t>(start) + k * static_cast<std::uint64_t>(step));
}

}  // namespace attnviz::jinja
