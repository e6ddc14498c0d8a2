#include "core/trace/number_format.h"

#include <array>
#include <cassert>
#include <charconv>
#include <cmath>

namespace pipelab {

std::string format_double(double value) {
  assert(std::isfinite(value));
  // Plain notation of a double needs at most 309 integer digits, or a few
  // hundred fraction digits for the tiniest values; 400 characters cover both.
  std::array<char, 400> buffer{};
  const auto result =
      std::to_chars(buffer.data(), buffer.data() + buffer.size(), value, std::chars_format::fixed);
  assert(result.ec == std::errc());
  return std::string(buffer.data(), result.ptr);
}

std::string format_integer(int64_t value) {
  std::array<char, 24> buffer{};
  const auto result = std::to_chars(buffer.data(), buffer.data() + buffer.size(), value);
  assert(result.ec == std::errc());
  return std::string(buffer.data(), result.ptr);
}

}  // namespace pipelab
