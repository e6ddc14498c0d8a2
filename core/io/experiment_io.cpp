// Experiment files: text <-> Experiment, data path resolution, overrides.
#include "core/io/experiment_io.h"

#include <charconv>
#include <optional>
#include <sstream>

#include "core/io/experiment_json.h"
#include "core/io/file_text.h"
#include "core/io/json_document.h"
#include "core/io/json_format.h"
#include "core/text/quoted_excerpt.h"
#include "core/text/utf8.h"

namespace pipelab {
namespace {

void throw_if_invalid(const Experiment& experiment) { throw_problems(validate_experiment(experiment)); }

// "model.layers[0].out" and "model.layers.0.out" both become {model, layers, 0, out}.
std::vector<std::string> split_key_path(std::string key_path) {
  for (char& c : key_path)
    if (c == '[') c = '.';
  std::erase(key_path, ']');
  std::vector<std::string> parts;
  std::string part;
  std::istringstream stream(key_path);
  while (std::getline(stream, part, '.')) parts.push_back(part);
  return parts;
}

// The array index `part` names, or nothing when it is not a whole number below `size`.
std::optional<size_t> array_index(const std::string& part, size_t size) {
  size_t index = 0;
  const auto [end, error] = std::from_chars(part.data(), part.data() + part.size(), index);
  if (part.empty() || error != std::errc() || end != part.data() + part.size() || index >= size)
    return std::nullopt;
  return index;
}

// The value an override path names inside the experiment's JSON form.
Json& find_override_target(Json& document, const std::string& key_path) {
  Json* node = &document;
  std::string walked;
  const std::string missing = "override path " + quoted_excerpt(key_path) + " does not exist: ";
  for (const std::string& part : split_key_path(key_path)) {
    const std::string where = walked.empty() ? "the experiment" : "'" + walked + "'";
    if (node->is_object()) {
      if (!node->contains(part)) {
        std::vector<std::string> keys;
        for (const auto& [key, value] : node->items()) keys.push_back(key);
        std::string message = missing + where + " has no key " + quoted_excerpt(part);
        if (auto guess = closest_name(part, keys)) message += " (did you mean '" + *guess + "'?)";
        throw ExperimentError(message + "; valid keys there: " + join_names(keys));
      }
      node = &(*node)[part];
    } else if (node->is_array()) {
      const std::optional<size_t> index = array_index(part, node->size());
      if (!index)
        throw ExperimentError(missing + where + " has " + std::to_string(node->size()) + " entries (index 0.." +
                              std::to_string(static_cast<int64_t>(node->size()) - 1) + "), not " +
                              quoted_excerpt(part));
      node = &(*node)[*index];
    } else {
      throw ExperimentError(missing + where + " is a single value, it has no " + quoted_excerpt(part));
    }
    // Every part walked so far exists, so it is one of the experiment's own keys or an index.
    walked += (walked.empty() ? "" : ".") + part;
  }
  return *node;
}

// JSON when the text is JSON (4, true, [2, 4], {"type": "relu"}), else the text itself (gpipe, 1f1b).
Json parse_override_value(const std::string& text) {
  if (std::optional<Json> value = parse_json_if_valid(text)) return *value;
  // Strings end up in messages, files and the app, which all need UTF-8.
  if (!is_valid_utf8(text))
    throw ExperimentError("override value " + quoted_excerpt(text) +
                          " is not valid UTF-8 text; write it in UTF-8");
  return Json(text);
}

// Edits the JSON form in place; the caller re-parses it.
void edit_json(Json& document, const std::string& assignment) {
  const size_t equals = assignment.find('=');
  if (equals == std::string::npos || equals == 0)
    throw ExperimentError("override " + quoted_excerpt(assignment) +
                          " must look like key.path=value, e.g. parallel.pp=4");
  const std::string key_path = assignment.substr(0, equals);
  find_override_target(document, key_path) = parse_override_value(assignment.substr(equals + 1));
}

Experiment reparse(const Json& document, const Experiment& original) {
  Experiment updated = experiment_from_json(document);
  updated.file_path = original.file_path;
  updated.data.resolved_path = resolve_path_beside(updated.data.path, directory_of(original.file_path));
  throw_if_invalid(updated);
  return updated;
}

}  // namespace

Experiment parse_experiment_unvalidated(const std::string& json_text, const std::string& base_dir) {
  Experiment experiment = experiment_from_json(parse_json_document(json_text));
  experiment.data.resolved_path = resolve_path_beside(experiment.data.path, base_dir);
  return experiment;
}

Experiment parse_experiment(const std::string& json_text, const std::string& base_dir) {
  Experiment experiment = parse_experiment_unvalidated(json_text, base_dir);
  throw_if_invalid(experiment);
  return experiment;
}

Experiment load_experiment_unvalidated(const std::string& path) {
  const std::string text = read_text_file(path, "experiment");
  try {
    Experiment experiment = parse_experiment_unvalidated(text, directory_of(path));
    experiment.file_path = path;
    return experiment;
  } catch (const ExperimentError& error) {
    throw ExperimentError(path_excerpt(path) + ": " + error.what());
  }
}

Experiment load_experiment(const std::string& path) {
  Experiment experiment = load_experiment_unvalidated(path);
  try {
    throw_if_invalid(experiment);
  } catch (const ExperimentError& error) {
    throw ExperimentError(path_excerpt(path) + ": " + error.what());
  }
  return experiment;
}

std::string experiment_to_json(const Experiment& experiment) {
  return format_json(experiment_to_json_value(experiment));
}

void save_experiment(const Experiment& experiment, const std::string& path) {
  write_text_file(path, experiment_to_json(experiment), "experiment file");
}

void apply_override(Experiment& experiment, const std::string& assignment) {
  Json document = experiment_to_json_value(experiment);
  edit_json(document, assignment);
  experiment = reparse(document, experiment);
}

void apply_overrides(Experiment& experiment, const std::vector<std::string>& assignments) {
  Json document = experiment_to_json_value(experiment);
  for (const std::string& assignment : assignments) edit_json(document, assignment);
  experiment = reparse(document, experiment);
}

}  // namespace pipelab
