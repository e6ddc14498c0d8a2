#include "core/io/json_document.h"

#include <string>

#include "core/text/quoted_excerpt.h"

namespace pipelab {
namespace {

// Long enough for nlohmann's "parse error at line L, column C: syntax error
// while parsing value - ...; last read: '...'" with a short excerpt.
constexpr size_t kParseMessageBytes = 240;

// nlohmann's what() is "[json.exception.parse_error.101] parse error at ...";
// the tag means nothing to a user.
std::string without_exception_tag(std::string message) {
  const size_t tag_end = message.find("] ");
  if (message.rfind("[json.exception", 0) == 0 && tag_end != std::string::npos)
    message.erase(0, tag_end + 2);
  return message;
}

// Throws nlohmann's exceptions for text that is not JSON, ExperimentError for
// the limits.
Json parse_within_limits(std::string_view text, const JsonLimits& limits) {
  if (text.size() > limits.max_bytes)
    throw ExperimentError("the JSON text is larger than the " +
                          std::to_string(limits.max_bytes >> 20) + " MiB " + limits.document +
                          " may take; is this the right file?");
  // Refuses the first value that opens too deep, before it is built.
  const Json::parser_callback_t limit_depth = [&limits](int depth, Json::parse_event_t event,
                                                        Json&) {
    const bool opens = event == Json::parse_event_t::object_start || event == Json::parse_event_t::array_start;
    if (opens && depth >= limits.max_depth)
      throw ExperimentError("the JSON is nested more than " + std::to_string(limits.max_depth) +
                            " levels deep; " + limits.depth_hint);
    return true;
  };
  return Json::parse(text.begin(), text.end(), limit_depth, /*allow_exceptions=*/true,
                     /*ignore_comments=*/limits.comments);
}

}  // namespace

Json parse_json_document(std::string_view text) { return parse_json_document(text, JsonLimits{}); }

Json parse_json_document(std::string_view text, const JsonLimits& limits) {
  try {
    return parse_within_limits(text, limits);
  } catch (const Json::exception& error) {
    // Parse errors and numbers out of range (1e400) alike; the message quotes
    // the text near the error, which may be any bytes.
    throw ExperimentError("not valid JSON: " +
                          safe_excerpt(without_exception_tag(error.what()), kParseMessageBytes));
  }
}

std::optional<Json> parse_json_if_valid(std::string_view text) {
  try {
    return parse_within_limits(text, JsonLimits{});
  } catch (const Json::parse_error&) {
    return std::nullopt;
  } catch (const Json::exception& error) {
    throw ExperimentError(quoted_excerpt(text) + " is not usable JSON: " +
                          safe_excerpt(without_exception_tag(error.what()), kParseMessageBytes));
  }
}

}  // namespace pipelab
