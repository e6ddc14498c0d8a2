// Helpers shared by the model tests.
#pragma once

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "core/model/model_spec.h"

namespace pipelab::testing {

// Expects describe_layers to throw std::invalid_argument whose message holds `needle`.
inline void expect_error_mentions(const ModelSpec& model, const std::string& needle) {
  try {
    describe_layers(model);
    FAIL() << "expected an error mentioning '" << needle << "'";
  } catch (const std::invalid_argument& error) {
    EXPECT_NE(std::string(error.what()).find(needle), std::string::npos) << error.what();
  }
}

}  // namespace pipelab::testing
