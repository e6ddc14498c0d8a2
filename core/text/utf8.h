// Well-formed UTF-8 (RFC 3629): no overlong forms, no surrogates, nothing past
// U+10FFFF. Text from outside is checked with these before it is stored or shown.
#pragma once

#include <cstddef>
#include <string_view>

namespace pipelab {

// Length (1 to 4) of the well-formed UTF-8 sequence starting at text[at], or 0
// when the bytes there do not form one. `at` must be < text.size().
size_t utf8_sequence_length(std::string_view text, size_t at);

bool is_valid_utf8(std::string_view text);

}  // namespace pipelab
