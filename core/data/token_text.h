// A sequence set's token ids turned back into text, to show a sample in the
// app, a log or a test: the ids' Dataset::token_text joined.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "core/data/dataset.h"

namespace pipelab {

// An id without text (outside the vocabulary, or a set with no token_text)
// shows as <id>, so a model's wrong guess is still visible.
std::string decode_tokens(const Dataset& dataset, std::span<const int32_t> ids);

// The same for inputs as stored in Dataset::x and Batch::x.
std::string decode_tokens(const Dataset& dataset, std::span<const float> ids);

}  // namespace pipelab
