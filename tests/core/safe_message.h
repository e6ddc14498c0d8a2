// For the io, data and cli tests: a message that echoes input is one line of
// valid UTF-8 without control characters (see core/text/quoted_excerpt.h).
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "core/text/utf8.h"

namespace pipelab::testing {

inline ::testing::AssertionResult is_safe_message(const std::string& message) {
  if (!is_valid_utf8(message)) return ::testing::AssertionFailure() << "invalid UTF-8: " << message;
  for (char c : message)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7F)
      return ::testing::AssertionFailure() << "control character in: " << message;
  return ::testing::AssertionSuccess();
}

}  // namespace pipelab::testing
