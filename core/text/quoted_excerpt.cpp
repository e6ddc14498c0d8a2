#include "core/text/quoted_excerpt.h"

#include <cstdint>

#include "core/text/utf8.h"

namespace pipelab {
namespace {

// Characters that would break a one-line message or act on the terminal:
// C1 controls (U+0080..U+009F) and the Unicode line and paragraph separators.
bool is_control_sequence(std::string_view sequence) {
  if (sequence.size() == 2) return static_cast<uint8_t>(sequence[0]) == 0xC2 &&
                                    static_cast<uint8_t>(sequence[1]) < 0xA0;
  return sequence == "\xE2\x80\xA8" || sequence == "\xE2\x80\xA9";
}

void append_hex_escape(std::string& out, uint8_t byte) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  out += "\\x";
  out += kHex[byte >> 4];
  out += kHex[byte & 0xF];
}

std::string escape(std::string_view text, size_t max_bytes, char quote) {
  std::string out;
  size_t at = 0;
  while (at < text.size()) {
    const size_t length = utf8_sequence_length(text, at);
    const size_t consumed = length == 0 ? 1 : length;
    if (at + consumed > max_bytes) {
      out += "...";
      break;
    }
    const std::string_view sequence = text.substr(at, consumed);
    const auto byte = static_cast<uint8_t>(text[at]);
    if (length == 0) {
      append_hex_escape(out, byte);
    } else if (length == 1) {
      if (byte == '\\' || (quote != 0 && byte == static_cast<uint8_t>(quote))) {
        out += '\\';
        out += static_cast<char>(byte);
      } else if (byte == '\n') {
        out += "\\n";
      } else if (byte == '\r') {
        out += "\\r";
      } else if (byte == '\t') {
        out += "\\t";
      } else if (byte < 0x20 || byte == 0x7F) {
        append_hex_escape(out, byte);
      } else {
        out += static_cast<char>(byte);
      }
    } else if (is_control_sequence(sequence)) {
      for (char c : sequence) append_hex_escape(out, static_cast<uint8_t>(c));
    } else {
      out += sequence;
    }
    at += consumed;
  }
  return out;
}

}  // namespace

std::string safe_excerpt(std::string_view text, size_t max_bytes) {
  return escape(text, max_bytes, 0);
}

std::string quoted_excerpt(std::string_view text, size_t max_bytes) {
  // Appended rather than "'" + ...: GCC 12 warns falsely (-Wrestrict) on that form.
  std::string quoted = "'";
  quoted += escape(text, max_bytes, '\'');
  quoted += '\'';
  return quoted;
}

std::string path_excerpt(std::string_view path) { return safe_excerpt(path, kPathExcerptBytes); }

}  // namespace pipelab
