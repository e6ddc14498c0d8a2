// JsonWriter: a small streaming JSON writer, so core/trace needs no JSON
// library. It inserts commas, escapes strings and writes non-finite numbers as
// null, so its output is always valid JSON when begin/end calls are balanced.
#pragma once

#include <cstdint>
#include <ostream>
#include <string_view>
#include <vector>

namespace pipelab {

class JsonWriter {
 public:
  explicit JsonWriter(std::ostream& out) : out_(out) {}

  // Containers. With one_per_line, each element starts on its own line, which
  // keeps long event arrays readable and diff-friendly.
  void begin_object();
  void end_object();
  void begin_array(bool one_per_line = false);
  void end_array();

  // Inside an object: the key of the next value.
  void key(std::string_view name);

  void value(std::string_view text);
  void value(const char* text) { value(std::string_view(text)); }
  void value(double number);  // NaN and infinities become null
  void value(int number) { value(static_cast<int64_t>(number)); }
  void value(int64_t number);
  void value(bool flag);
  void null();

  // key + value in one call.
  template <typename T>
  void field(std::string_view name, const T& field_value) {
    key(name);
    value(field_value);
  }

 private:
  struct Level {
    bool is_object = false;
    bool one_per_line = false;
    bool empty = true;
  };
  void before_value();  // comma or newline before an element

  std::ostream& out_;
  std::vector<Level> levels_;
  bool after_key_ = false;
};

// `text` as a JSON string literal, quotes included.
void write_json_string(std::ostream& out, std::string_view text);

}  // namespace pipelab
