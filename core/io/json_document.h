// Parsing JSON text that comes from outside (experiment files, --set values)
// within limits, so a huge or deeply nested document is an error message
// rather than exhausted memory or a stack overflow in the recursive code that
// copies, prints and compares JSON values. Internal to core/io.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "core/io/json_reader.h"

namespace pipelab {

// Experiment files are a few kilobytes; even 10,000 layers written one per
// line take under 1 MiB.
inline constexpr size_t kMaxExperimentBytes = size_t{4} << 20;  // 4 MiB
// An experiment nests 4 levels (top, model, layers, one layer); 64 leaves room
// for any tool's layout and keeps recursion over the document shallow.
inline constexpr int kMaxJsonDepth = 64;

// Parses `text` (comments allowed, so users can annotate their files). Throws
// ExperimentError with one line: "not valid JSON: parse error at line 3,
// column 5: ..." (input quoted as a short escaped excerpt), or that the text
// is larger than kMaxExperimentBytes or nested deeper than kMaxJsonDepth.
Json parse_json_document(std::string_view text);

// The same within other limits, for larger documents such as run files
// (core/io/run_file.h), with the messages' words for them.
struct JsonLimits {
  size_t max_bytes = kMaxExperimentBytes;
  int max_depth = kMaxJsonDepth;
  std::string document = "an experiment";  // "... larger than the 4 MiB an experiment may take"
  std::string depth_hint = "an experiment nests 4 ({\"model\": {\"layers\": [{...}]}})";
  bool comments = true;  // users annotate experiments; programs write run files
};
Json parse_json_document(std::string_view text, const JsonLimits& limits);

// The same, but nothing when the text is not JSON at all (a bare word such as
// gpipe). Too large, too deep and out-of-range numbers still throw.
std::optional<Json> parse_json_if_valid(std::string_view text);

}  // namespace pipelab
