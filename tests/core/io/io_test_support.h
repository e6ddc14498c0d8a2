// Shared by the io tests: a small valid experiment document, error checks and
// a temporary folder.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <random>
#include <string>

#include <nlohmann/json.hpp>

#include "core/io/experiment_io.h"

namespace pipelab::testing {

// A valid experiment on synthetic data (no files needed): 2 -> 16 -> 16 -> 3, pp 2.
inline nlohmann::json small_experiment_json() {
  return nlohmann::json::parse(R"({
    "name": "small",
    "model": {"input": [2],
              "layers": [{"type": "linear", "out": 16}, {"type": "relu"},
                         {"type": "linear", "out": 16}, {"type": "relu"},
                         {"type": "linear", "out": 3}],
              "loss": "cross_entropy"},
    "data": {"source": "spiral", "classes": 3},
    "training": {"batch_size": 64, "steps": 10, "optimizer": {"type": "sgd", "lr": 0.05}},
    "parallel": {"pp": 2, "microbatches": 4, "schedule": "1f1b"}
  })");
}

// The message parse_experiment throws for `text`, or "" when it parses.
inline std::string parse_error(const std::string& text) {
  try {
    parse_experiment(text);
  } catch (const ExperimentError& error) {
    return error.what();
  }
  return "";
}

#define EXPECT_MENTIONS(message, needle)                                              \
  EXPECT_NE(std::string(message).find(needle), std::string::npos)                     \
      << "expected '" << (needle) << "' in: " << (message)

// A fresh folder under the system temp folder, removed with everything in it.
class TempFolder {
 public:
  TempFolder() {
    std::random_device random;
    path_ = std::filesystem::temp_directory_path() /
            ("pipelab-io-test-" + std::to_string(random()) + std::to_string(random()));
    std::filesystem::create_directories(path_);
  }
  ~TempFolder() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  TempFolder(const TempFolder&) = delete;
  TempFolder& operator=(const TempFolder&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace pipelab::testing
