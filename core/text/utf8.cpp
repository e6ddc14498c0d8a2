#include "core/text/utf8.h"

#include <cstdint>

namespace pipelab {
namespace {

bool in_range(uint8_t byte, uint8_t low, uint8_t high) { return byte >= low && byte <= high; }

}  // namespace

size_t utf8_sequence_length(std::string_view text, size_t at) {
  const auto byte = [&](size_t i) { return static_cast<uint8_t>(text[at + i]); };
  const size_t left = text.size() - at;
  const auto continuation = [&](size_t i) { return i < left && in_range(byte(i), 0x80, 0xBF); };
  const uint8_t lead = byte(0);
  if (lead < 0x80) return 1;
  if (in_range(lead, 0xC2, 0xDF)) return continuation(1) ? 2 : 0;
  if (left < 2) return 0;
  if (in_range(lead, 0xE0, 0xEF)) {
    const uint8_t low = lead == 0xE0 ? 0xA0 : 0x80;   // E0: no overlong forms
    const uint8_t high = lead == 0xED ? 0x9F : 0xBF;  // ED: no surrogates
    return in_range(byte(1), low, high) && continuation(2) ? 3 : 0;
  }
  if (in_range(lead, 0xF0, 0xF4)) {
    const uint8_t low = lead == 0xF0 ? 0x90 : 0x80;   // F0: no overlong forms
    const uint8_t high = lead == 0xF4 ? 0x8F : 0xBF;  // F4: nothing past U+10FFFF
    return in_range(byte(1), low, high) && continuation(2) && continuation(3) ? 4 : 0;
  }
  return 0;
}

bool is_valid_utf8(std::string_view text) {
  for (size_t at = 0; at < text.size();) {
    const size_t length = utf8_sequence_length(text, at);
    if (length == 0) return false;
    at += length;
  }
  return true;
}

}  // namespace pipelab
