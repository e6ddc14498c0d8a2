#include "core/data/token_text.h"

#include <cmath>

namespace pipelab {

namespace {

void append_token(const Dataset& dataset, int64_t id, std::string& text) {
  if (id >= 0 && id < static_cast<int64_t>(dataset.token_text.size())) {
    text += dataset.token_text[static_cast<size_t>(id)];
  } else {
    text.append(1, '<').append(std::to_string(id)).append(1, '>');
  }
}

}  // namespace

std::string decode_tokens(const Dataset& dataset, std::span<const int32_t> ids) {
  std::string text;
  for (int32_t id : ids) append_token(dataset, id, text);
  return text;
}

std::string decode_tokens(const Dataset& dataset, std::span<const float> ids) {
  std::string text;
  for (float id : ids) {
    // Anything that is not a whole id in range is shown as "<-1>", never cast blindly.
    const bool whole = std::isfinite(id) && std::floor(id) == id && std::fabs(id) < kMaxTokenIds;
    append_token(dataset, whole ? static_cast<int64_t>(id) : -1, text);
  }
  return text;
}

}  // namespace pipelab
