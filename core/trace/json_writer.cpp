#include "core/trace/json_writer.h"

#include <cassert>
#include <cmath>

#include "core/trace/number_format.h"

namespace pipelab {

void write_json_string(std::ostream& out, std::string_view text) {
  static const char* const kHex = "0123456789abcdef";
  out << '"';
  for (char c : text) {
    switch (c) {
      case '"':
        out << "\\\"";
        break;
      case '\\':
        out << "\\\\";
        break;
      case '\n':
        out << "\\n";
        break;
      case '\r':
        out << "\\r";
        break;
      case '\t':
        out << "\\t";
        break;
      case '\b':
        out << "\\b";
        break;
      case '\f':
        out << "\\f";
        break;
      default: {
        const auto byte = static_cast<unsigned char>(c);
        if (byte < 0x20) {
          // Other control characters must be \u escapes; bytes >= 0x80 are
          // UTF-8 and pass through unchanged.
          out << "\\u00" << kHex[byte >> 4] << kHex[byte & 0xF];
        } else {
          out << c;
        }
      }
    }
  }
  out << '"';
}

void JsonWriter::before_value() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (levels_.empty()) return;  // the top-level value
  Level& level = levels_.back();
  assert(!level.is_object && "a value inside an object needs a key first");
  if (!level.empty) out_ << ',';
  if (level.one_per_line) out_ << '\n';
  level.empty = false;
}

void JsonWriter::begin_object() {
  before_value();
  out_ << '{';
  levels_.push_back({true, false, true});
}

void JsonWriter::end_object() {
  assert(!levels_.empty() && levels_.back().is_object && !after_key_);
  levels_.pop_back();
  out_ << '}';
}

void JsonWriter::begin_array(bool one_per_line) {
  before_value();
  out_ << '[';
  levels_.push_back({false, one_per_line, true});
}

void JsonWriter::end_array() {
  assert(!levels_.empty() && !levels_.back().is_object);
  if (levels_.back().one_per_line && !levels_.back().empty) out_ << '\n';
  levels_.pop_back();
  out_ << ']';
}

void JsonWriter::key(std::string_view name) {
  assert(!levels_.empty() && levels_.back().is_object && !after_key_);
  Level& level = levels_.back();
  if (!level.empty) out_ << ',';
  level.empty = false;
  write_json_string(out_, name);
  out_ << ':';
  after_key_ = true;
}

void JsonWriter::value(std::string_view text) {
  before_value();
  write_json_string(out_, text);
}

void JsonWriter::value(double number) {
  before_value();
  if (std::isfinite(number)) {
    out_ << format_double(number);
  } else {
    out_ << "null";  // JSON has no NaN or Infinity
  }
}

void JsonWriter::value(int64_t number) {
  before_value();
  out_ << format_integer(number);
}

void JsonWriter::value(bool flag) {
  before_value();
  out_ << (flag ? "true" : "false");
}

void JsonWriter::null() {
  before_value();
  out_ << "null";
}

}  // namespace pipelab
