#include "core/io/json_format.h"

namespace pipelab {
namespace {

constexpr size_t kIndentWidth = 2;
constexpr size_t kMaxLineLength = 100;

// A container is flat when it holds only scalars: it may go on one line.
bool is_flat(const Json& value) {
  if (!value.is_structured()) return true;
  for (const auto& member : value) {
    if (member.is_structured()) return false;
  }
  return true;
}

// One-line form: [2, 4] or {"type": "linear", "out": 64}.
std::string inline_text(const Json& value) {
  if (!value.is_structured()) return value.dump();
  const bool object = value.is_object();
  std::string text = object ? "{" : "[";
  bool first = true;
  for (const auto& [key, member] : value.items()) {
    if (!first) text += ", ";
    first = false;
    if (object) text += Json(key).dump() + ": ";
    text += member.dump();
  }
  return text + (object ? "}" : "]");
}

void append(std::string& out, const Json& value, size_t indent, size_t prefix_length) {
  if (is_flat(value)) {
    const std::string line = inline_text(value);
    if (!value.is_structured() || indent + prefix_length + line.size() <= kMaxLineLength) {
      out += line;
      return;
    }
  }
  const bool object = value.is_object();
  const std::string inner(indent + kIndentWidth, ' ');
  out += object ? "{\n" : "[\n";
  bool first = true;
  for (const auto& [key, member] : value.items()) {
    if (!first) out += ",\n";
    first = false;
    out += inner;
    const std::string prefix = object ? Json(key).dump() + ": " : "";
    out += prefix;
    append(out, member, indent + kIndentWidth, prefix.size());
  }
  out += '\n';
  out.append(indent, ' ');
  out += object ? '}' : ']';
}

}  // namespace

std::string format_json(const Json& value) {
  std::string out;
  append(out, value, 0, 0);
  return out + "\n";
}

}  // namespace pipelab
