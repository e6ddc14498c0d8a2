#include "core/io/json_reader.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>

#include "core/text/quoted_excerpt.h"

namespace pipelab {
namespace {

std::string lowercase(std::string text) {
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

// Levenshtein distance: single-character insertions, deletions, substitutions.
size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> previous(b.size() + 1), current(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) previous[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    current[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t substitute = previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      current[j] = std::min({previous[j] + 1, current[j - 1] + 1, substitute});
    }
    std::swap(previous, current);
  }
  return previous[b.size()];
}

[[noreturn]] void throw_type_error(const std::string& field, const char* expected, const Json& value) {
  throw ExperimentError(field + " must be " + expected + ", got " + json_value_text(value));
}

}  // namespace

std::string join_names(const std::vector<std::string>& names) {
  std::string text;
  for (size_t i = 0; i < names.size(); ++i) text += (i ? ", " : "") + names[i];
  return text;
}

std::optional<std::string> closest_name(const std::string& name, const std::vector<std::string>& candidates) {
  // Close means: a third of the longer word may differ (at least one character),
  // compared without case, so "schedul", "Schedule" and "shedule" all find "schedule".
  std::optional<std::string> best;
  size_t best_distance = std::numeric_limits<size_t>::max();
  const std::string lowered = lowercase(name);
  for (const std::string& candidate : candidates) {
    const size_t allowed = std::max<size_t>(1, std::max(name.size(), candidate.size()) / 3);
    // The lengths alone rule it out; skipping keeps a megabyte-long key from costing seconds.
    const size_t length_gap = name.size() > candidate.size() ? name.size() - candidate.size()
                                                             : candidate.size() - name.size();
    if (length_gap > allowed) continue;
    const size_t distance = edit_distance(lowered, lowercase(candidate));
    if (distance <= allowed && distance < best_distance) {
      best = candidate;
      best_distance = distance;
    }
  }
  return best;
}

std::string json_value_text(const Json& value) {
  // Strings from --set may hold any bytes: replace keeps dump() from throwing,
  // and the excerpt escapes what is left.
  return safe_excerpt(value.dump(-1, ' ', false, Json::error_handler_t::replace));
}

std::string json_to_string(const Json& value, const std::string& field) {
  if (!value.is_string()) throw_type_error(field, "a string", value);
  return value.get<std::string>();
}

bool json_to_bool(const Json& value, const std::string& field) {
  if (!value.is_boolean()) throw_type_error(field, "true or false", value);
  return value.get<bool>();
}

double json_to_number(const Json& value, const std::string& field) {
  if (!value.is_number()) throw_type_error(field, "a number", value);
  return value.get<double>();
}

int64_t json_to_integer(const Json& value, const std::string& field) {
  if (value.is_number_unsigned()) {
    const uint64_t number = value.get<uint64_t>();
    if (number > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
      throw ExperimentError(field + " = " + value.dump() + " is too large");
    return static_cast<int64_t>(number);
  }
  if (value.is_number_integer()) return value.get<int64_t>();
  // Accept integral floats such as 4.0 or 1e3, which some tools write.
  if (value.is_number_float()) {
    const double number = value.get<double>();
    if (std::trunc(number) == number && std::abs(number) < 9.0e15) return static_cast<int64_t>(number);
  }
  throw_type_error(field, "an integer", value);
}

int json_to_int(const Json& value, const std::string& field) {
  const int64_t number = json_to_integer(value, field);
  if (number > std::numeric_limits<int>::max() || number < std::numeric_limits<int>::min())
    throw ExperimentError(field + " = " + value.dump() + " is out of range");
  return static_cast<int>(number);
}

uint64_t json_to_unsigned(const Json& value, const std::string& field) {
  if (value.is_number_unsigned()) return value.get<uint64_t>();
  const int64_t number = json_to_integer(value, field);
  if (number < 0) throw ExperimentError(field + " must be >= 0, got " + value.dump());
  return static_cast<uint64_t>(number);
}

std::vector<int64_t> json_to_integer_list(const Json& value, const std::string& field) {
  if (!value.is_array()) throw_type_error(field, "an array of integers like [2, 4]", value);
  std::vector<int64_t> numbers;
  for (size_t i = 0; i < value.size(); ++i)
    numbers.push_back(json_to_integer(value[i], field + "[" + std::to_string(i) + "]"));
  return numbers;
}

std::string unknown_name_message(const std::string& field, const std::string& name, const char* what,
                                 const std::vector<std::string>& valid_names) {
  std::string message = field + " = " + quoted_excerpt(name) + " is not " + what + "; valid: " + join_names(valid_names);
  if (auto guess = closest_name(name, valid_names)) message += " (did you mean '" + *guess + "'?)";
  return message;
}

JsonObjectReader::JsonObjectReader(const Json& value, std::string path, std::vector<std::string> valid_keys)
    : object_(value), path_(std::move(path)) {
  if (!value.is_object())
    throw_type_error(path_.empty() ? std::string("the file") : path_, "a JSON object {...}", value);
  for (const auto& [key, member] : value.items()) {
    if (std::find(valid_keys.begin(), valid_keys.end(), key) != valid_keys.end()) continue;
    std::string message = "unknown key " + quoted_excerpt(field(key), path_.size() + 1 + kExcerptBytes);
    if (auto guess = closest_name(key, valid_keys)) message += " (did you mean '" + *guess + "'?)";
    message += "; valid keys here: " + join_names(valid_keys);
    throw ExperimentError(message);
  }
}

const Json* JsonObjectReader::find(const std::string& key) const {
  auto it = object_.find(key);
  return it == object_.end() ? nullptr : &*it;
}

std::string JsonObjectReader::field(const std::string& key) const {
  return path_.empty() ? key : path_ + "." + key;
}

void JsonObjectReader::read(const std::string& key, std::string& target) const {
  if (const Json* value = find(key)) target = json_to_string(*value, field(key));
}

void JsonObjectReader::read(const std::string& key, bool& target) const {
  if (const Json* value = find(key)) target = json_to_bool(*value, field(key));
}

void JsonObjectReader::read(const std::string& key, double& target) const {
  if (const Json* value = find(key)) target = json_to_number(*value, field(key));
}

void JsonObjectReader::read(const std::string& key, int& target) const {
  if (const Json* value = find(key)) target = json_to_int(*value, field(key));
}

void JsonObjectReader::read(const std::string& key, int64_t& target) const {
  if (const Json* value = find(key)) target = json_to_integer(*value, field(key));
}

void JsonObjectReader::read(const std::string& key, uint64_t& target) const {
  if (const Json* value = find(key)) target = json_to_unsigned(*value, field(key));
}

}  // namespace pipelab
