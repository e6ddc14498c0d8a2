// JSON reading helpers for experiment files: typed reads that name the field
// by its full path ("parallel.pp") in every error. Internal to core/io: this
// header brings in nlohmann_json, which other folders never see.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/io/experiment_io.h"

namespace pipelab {

// ordered_json keeps keys in the order they were written, so saved files read
// top-down (name, model, data, ...) and error lists follow the file.
using Json = nlohmann::ordered_json;

// "a, b, c"
std::string join_names(const std::vector<std::string>& names);

// The entry of `candidates` that `name` most likely misspells, if any is close.
std::optional<std::string> closest_name(const std::string& name, const std::vector<std::string>& candidates);

// A JSON value as it appears in the file, shortened for one-line messages.
std::string json_value_text(const Json& value);

// Typed conversions; `field` is the full path used in the error message.
std::string json_to_string(const Json& value, const std::string& field);
bool json_to_bool(const Json& value, const std::string& field);
double json_to_number(const Json& value, const std::string& field);
int64_t json_to_integer(const Json& value, const std::string& field);  // accepts 3.0, not 3.5
int json_to_int(const Json& value, const std::string& field);          // and checks the int range
uint64_t json_to_unsigned(const Json& value, const std::string& field);
std::vector<int64_t> json_to_integer_list(const Json& value, const std::string& field);  // [1, 2, 3]

// A name from a fixed list (schedule, layer type, ...). Throws, listing the
// valid names: "parallel.schedule = 'zb' is not a schedule; valid: gpipe, ...".
template <typename T, typename Parse>
T json_to_name(const Json& value, const std::string& field, const char* what, Parse parse,
               const std::vector<std::string>& valid_names);

// Reads the members of one JSON object. The constructor rejects a value that
// is not an object and any key outside `valid_keys` (suggesting the closest).
class JsonObjectReader {
 public:
  JsonObjectReader(const Json& value, std::string path, std::vector<std::string> valid_keys);

  // nullptr when the key is absent (every field is optional unless said).
  const Json* find(const std::string& key) const;
  // The full path of a key: "parallel" + "pp" -> "parallel.pp".
  std::string field(const std::string& key) const;

  // Each leaves `target` unchanged when the key is absent.
  void read(const std::string& key, std::string& target) const;
  void read(const std::string& key, bool& target) const;
  void read(const std::string& key, double& target) const;
  void read(const std::string& key, int& target) const;
  void read(const std::string& key, int64_t& target) const;
  void read(const std::string& key, uint64_t& target) const;

 private:
  const Json& object_;
  std::string path_;
};

// --- template definition ----------------------------------------------------

std::string unknown_name_message(const std::string& field, const std::string& name, const char* what,
                                 const std::vector<std::string>& valid_names);

template <typename T, typename Parse>
T json_to_name(const Json& value, const std::string& field, const char* what, Parse parse,
               const std::vector<std::string>& valid_names) {
  const std::string name = json_to_string(value, field);
  const std::optional<T> parsed = parse(name);
  if (!parsed) throw ExperimentError(unknown_name_message(field, name, what, valid_names));
  return *parsed;
}

}  // namespace pipelab
