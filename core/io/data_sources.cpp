#include "core/io/data_sources.h"

#include <algorithm>

namespace pipelab {

std::vector<std::string> data_source_names() {
  return {"mnist", "fashion-mnist", "idx", "csv", "spiral", "moons", "circles", "xor", "blobs", "teacher",
          "text", "copy", "reverse", "sort", "add"};
}

bool is_sequence_data_source(const std::string& source) {
  return source == "text" || source == "copy" || source == "reverse" || source == "sort" || source == "add";
}

bool is_data_source(const std::string& source) {
  const auto names = data_source_names();
  return std::find(names.begin(), names.end(), source) != names.end();
}

bool is_file_data_source(const std::string& source) {
  return source == "mnist" || source == "fashion-mnist" || source == "idx" || source == "csv" || source == "text";
}

DataShape data_source_shape(const DataSpec& data) {
  const std::string& source = data.source;
  if (source == "mnist" || source == "fashion-mnist") return {28 * 28, 10};
  if (source == "spiral") return {2, data.classes};
  if (source == "moons" || source == "circles" || source == "xor") return {2, 2};
  if (source == "teacher" && data.classes == 0) return {data.features, 1};  // regression
  if (source == "blobs" || source == "teacher") return {data.features, data.classes};
  // A sequence task's vocabulary is data.vocab; its length is the model's input.
  if (is_sequence_data_source(source) && source != "text") return {0, data.vocab};
  return {0, 0};  // idx, csv, token sequences (the model's input sets their length), or an unknown name
}

}  // namespace pipelab
