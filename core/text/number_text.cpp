#include "core/text/number_text.h"

#include <charconv>

namespace pipelab {

std::string number_text(double value) {
  char buffer[64];
  const std::to_chars_result written = std::to_chars(buffer, buffer + sizeof buffer, value);
  return std::string(buffer, written.ptr);
}

}  // namespace pipelab
