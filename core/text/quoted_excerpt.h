// Text read from outside (file contents, file names, command-line values) made
// safe to put in a one-line message for the terminal or the app: always valid
// UTF-8, never a line break or other control character, and short.
//
// Printable ASCII and well-formed UTF-8 characters pass unchanged. A backslash
// becomes \\; a line feed, carriage return and tab become \n, \r, \t; every
// other byte of a control character (C0, DEL, C1, U+2028, U+2029) and every
// byte that is not part of a well-formed UTF-8 sequence becomes \xNN. Past
// `max_bytes` of input the excerpt stops at a character boundary and ends in
// "...". Escape each piece of input once, where it enters the message.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace pipelab {

// Enough to recognise a value or a cell; messages stay one readable line.
inline constexpr size_t kExcerptBytes = 60;
// Paths are shown whole unless absurdly long (PATH_MAX is 4096).
inline constexpr size_t kPathExcerptBytes = 400;

// The escaped text, as is: abc
std::string safe_excerpt(std::string_view text, size_t max_bytes = kExcerptBytes);

// The escaped text between single quotes, a quote inside escaped as \': 'abc'
std::string quoted_excerpt(std::string_view text, size_t max_bytes = kExcerptBytes);

// A path for a message: safe_excerpt(path, kPathExcerptBytes).
std::string path_excerpt(std::string_view path);

}  // namespace pipelab
