// Experiment files: text <-> Experiment, data path resolution, overrides.
#include "core/io/experiment_io.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/io/experiment_json.h"
#include "core/io/json_format.h"

namespace fs = std::filesystem;

namespace pipelab {
namespace {

// An experiment nests a few levels deep. Deeper input is refused while it is
// parsed: printing a value nested thousands deep (as error messages do)
// recurses once per level and overflows the stack.
constexpr int kMaxJsonDepth = 64;

Json parse_with_depth_limit(const std::string& text, bool ignore_comments) {
  const auto check_depth = [](int depth, Json::parse_event_t, Json&) {
    if (depth >= kMaxJsonDepth)
      throw ExperimentError("values nested more than " + std::to_string(kMaxJsonDepth) +
                            " levels deep; an experiment needs a handful");
    return true;
  };
  return Json::parse(text, check_depth, /*allow_exceptions=*/true, ignore_comments);
}

Json parse_json_text(const std::string& json_text) {
  try {
    // Comments are allowed so users can annotate their files (saving drops them).
    return parse_with_depth_limit(json_text, /*ignore_comments=*/true);
  } catch (const Json::exception& error) {
    // Parse errors and numbers out of range (1e400) alike. what() is
    // "[json.exception.parse_error.101] parse error at line 3, column 5: ..."
    std::string message = error.what();
    const size_t tag_end = message.find("] ");
    if (message.rfind("[json.exception", 0) == 0 && tag_end != std::string::npos) message.erase(0, tag_end + 2);
    throw ExperimentError("not valid JSON: " + message);
  }
}

// Relative paths are looked up beside the experiment file first (examples
// name their data relative to themselves), then in the working directory.
std::string resolve_data_path(const std::string& path, const std::string& base_dir) {
  if (path.empty()) return "";
  const fs::path written(path);
  if (written.is_absolute()) return written.lexically_normal().string();
  std::error_code ignored;
  fs::path beside_file;
  if (!base_dir.empty()) {
    beside_file = fs::absolute(fs::path(base_dir) / written, ignored).lexically_normal();
    if (fs::exists(beside_file, ignored)) return beside_file.string();
  }
  const fs::path from_working_dir = fs::absolute(written, ignored).lexically_normal();
  if (fs::exists(from_working_dir, ignored)) return from_working_dir.string();
  // Found in neither: name the place beside the file, where it most likely belongs.
  return base_dir.empty() ? from_working_dir.string() : beside_file.string();
}

std::string directory_of(const std::string& file_path) {
  if (file_path.empty()) return "";
  std::error_code ignored;
  return fs::absolute(fs::path(file_path), ignored).parent_path().string();
}

void throw_if_invalid(const Experiment& experiment) {
  const std::vector<std::string> problems = validate_experiment(experiment);
  if (problems.empty()) return;
  std::string message = problems.front();
  if (problems.size() > 1)
    message += " (and " + std::to_string(problems.size() - 1) + " more problem" +
               (problems.size() > 2 ? "s" : "") + ")";
  throw ExperimentError(message);
}

std::string read_text_file(const std::string& path) {
  std::error_code ignored;
  if (!fs::exists(path, ignored)) throw ExperimentError("experiment file not found: '" + path + "'");
  if (fs::is_directory(path, ignored))
    throw ExperimentError("'" + path + "' is a folder; give the experiment's .json file");
  std::ifstream file(path, std::ios::binary);
  if (!file) throw ExperimentError("cannot open experiment file '" + path + "'");
  std::ostringstream text;
  text << file.rdbuf();
  return text.str();
}

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

// The value an override path names inside the experiment's JSON form.
Json& find_override_target(Json& document, const std::string& key_path) {
  Json* node = &document;
  std::string walked;
  for (const std::string& part : split_key_path(key_path)) {
    const std::string where = walked.empty() ? "the experiment" : "'" + walked + "'";
    if (node->is_object()) {
      if (!node->contains(part)) {
        std::vector<std::string> keys;
        for (const auto& [key, value] : node->items()) keys.push_back(key);
        std::string message = "override path '" + key_path + "' does not exist: " + where + " has no key '" +
                              part + "'";
        if (auto guess = closest_name(part, keys)) message += " (did you mean '" + *guess + "'?)";
        throw ExperimentError(message + "; valid keys there: " + join_names(keys));
      }
      node = &(*node)[part];
    } else if (node->is_array()) {
      const bool is_index = !part.empty() && part.find_first_not_of("0123456789") == std::string::npos;
      if (!is_index || std::stoull(part) >= node->size())
        throw ExperimentError("override path '" + key_path + "' does not exist: " + where + " has " +
                              std::to_string(node->size()) + " entries (index 0.." +
                              std::to_string(static_cast<int64_t>(node->size()) - 1) + "), not '" + part + "'");
      node = &(*node)[std::stoull(part)];
    } else {
      throw ExperimentError("override path '" + key_path + "' does not exist: " + where + " is a single value, " +
                            "it has no '" + part + "'");
    }
    walked += (walked.empty() ? "" : ".") + part;
  }
  return *node;
}

// JSON when the text is JSON (4, true, [2, 4], {"type": "relu"}), else the text itself (gpipe, 1f1b).
Json parse_override_value(const std::string& text) {
  try {
    return parse_with_depth_limit(text, /*ignore_comments=*/false);
  } catch (const Json::out_of_range&) {
    throw ExperimentError("'" + text + "' is out of range for a number");
  } catch (const Json::parse_error&) {
    return Json(text);
  }
}

// Edits the JSON form in place; the caller re-parses it.
void edit_json(Json& document, const std::string& assignment) {
  const size_t equals = assignment.find('=');
  if (equals == std::string::npos || equals == 0)
    throw ExperimentError("override '" + assignment + "' must look like key.path=value, e.g. parallel.pp=4");
  const std::string key_path = assignment.substr(0, equals);
  find_override_target(document, key_path) = parse_override_value(assignment.substr(equals + 1));
}

Experiment reparse(const Json& document, const Experiment& original) {
  Experiment updated = experiment_from_json(document);
  updated.file_path = original.file_path;
  updated.data.resolved_path = resolve_data_path(updated.data.path, directory_of(original.file_path));
  throw_if_invalid(updated);
  return updated;
}

}  // namespace

Experiment parse_experiment_unvalidated(const std::string& json_text, const std::string& base_dir) {
  Experiment experiment = experiment_from_json(parse_json_text(json_text));
  experiment.data.resolved_path = resolve_data_path(experiment.data.path, base_dir);
  return experiment;
}

Experiment parse_experiment(const std::string& json_text, const std::string& base_dir) {
  Experiment experiment = parse_experiment_unvalidated(json_text, base_dir);
  throw_if_invalid(experiment);
  return experiment;
}

Experiment load_experiment_unvalidated(const std::string& path) {
  const std::string text = read_text_file(path);
  try {
    Experiment experiment = parse_experiment_unvalidated(text, directory_of(path));
    experiment.file_path = path;
    return experiment;
  } catch (const ExperimentError& error) {
    throw ExperimentError(path + ": " + error.what());
  }
}

Experiment load_experiment(const std::string& path) {
  Experiment experiment = load_experiment_unvalidated(path);
  try {
    throw_if_invalid(experiment);
  } catch (const ExperimentError& error) {
    throw ExperimentError(path + ": " + error.what());
  }
  return experiment;
}

std::string experiment_to_json(const Experiment& experiment) {
  return format_json(experiment_to_json_value(experiment));
}

void save_experiment(const Experiment& experiment, const std::string& path) {
  // Write beside the target, then rename: a failed save never leaves half a file.
  const std::string temporary = path + ".saving";
  {
    std::ofstream file(temporary, std::ios::binary | std::ios::trunc);
    if (!file) throw ExperimentError("cannot write experiment file '" + path + "': cannot create '" + temporary + "'");
    file << experiment_to_json(experiment);
    if (!file.flush()) throw ExperimentError("cannot write experiment file '" + path + "'");
  }
  std::error_code error;
  fs::rename(temporary, path, error);
  if (error) {
    std::error_code ignored;
    fs::remove(temporary, ignored);
    throw ExperimentError("cannot write experiment file '" + path + "': " + error.message());
  }
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
