// Inputs the fuzz targets found (kept in tests/fuzz/regressions/), each
// checked for its fix: a clear problem instead of an escaped exception.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "core/sim/experiment_prediction.h"
#include "tests/core/io/io_test_support.h"
#include "tests/core/safe_message.h"

namespace pipelab {
namespace {

std::string regression_file(const std::string& name) {
  std::ifstream file(std::string(PIPELAB_SOURCE_DIR) + "/tests/fuzz/regressions/" + name, std::ios::binary);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream stream(text);
  for (std::string line; std::getline(stream, line);) lines.push_back(line);
  return lines;
}

// experiment_fuzz and set_override_fuzz: validation passed, then building the
// schedule threw "pipedream-2bw needs microbatches >= pp".
TEST(FuzzRegressions, PipeDream2BWWithFewerMicrobatchesThanStagesIsAProblem) {
  const Experiment experiment =
      parse_experiment_unvalidated(regression_file("experiment_pipedream_2bw_fewer_microbatches_than_stages.json"));
  const std::vector<std::string> problems = validate_experiment(experiment);
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_MENTIONS(problems[0], "parallel.microbatches = 2 must be >= parallel.pp = 4 for pipedream-2bw");

  Experiment overridden = default_experiment();
  const auto assignments = lines_of(regression_file("set_override_pipedream_2bw_one_microbatch.txt"));
  try {
    apply_overrides(overridden, assignments);
    FAIL() << "the overrides were accepted";
  } catch (const ExperimentError& error) {
    EXPECT_MENTIONS(error.what(), "parallel.microbatches = 1 must be >= parallel.pp = 2 for pipedream-2bw");
  }
}

// experiment_fuzz: nlohmann's parse error quoted the raw byte it stopped at,
// so the message was not valid UTF-8.
TEST(FuzzRegressions, AParseErrorAtAnInvalidByteIsASafeMessage) {
  const std::string message = testing::parse_error(regression_file("experiment_invalid_utf8_in_parse_error.json"));
  EXPECT_MENTIONS(message, "not valid JSON: parse error at line 8, column 7");
  EXPECT_TRUE(testing::is_safe_message(message)) << message;
}

// set_override_fuzz: a value that is not JSON became a string with invalid
// UTF-8, and printing it for an error threw nlohmann's type_error 316 (an
// internal error in the CLI).
TEST(FuzzRegressions, AnOverrideValueThatIsNotUtf8IsRefused) {
  Experiment experiment = default_experiment();
  try {
    apply_overrides(experiment, lines_of(regression_file("set_override_invalid_utf8_string.txt")));
    FAIL() << "the override was accepted";
  } catch (const ExperimentError& error) {
    EXPECT_MENTIONS(error.what(), "is not valid UTF-8 text");
    EXPECT_TRUE(testing::is_safe_message(error.what())) << error.what();
  }
}

// experiment_fuzz and set_override_fuzz: nlohmann escapes bytes below 0x20 in
// its parse errors but not DEL, and override paths were echoed as written.
TEST(FuzzRegressions, ControlCharactersInParseErrorsAndOverridePathsAreEscaped) {
  const std::string parse = testing::parse_error("{\n  \"na\x7f\x04\n");
  EXPECT_MENTIONS(parse, "\\x7F");
  EXPECT_TRUE(testing::is_safe_message(parse)) << parse;

  Experiment experiment = default_experiment();
  try {
    apply_override(experiment, "tra\x01ining.steps=5");
    FAIL() << "the override was accepted";
  } catch (const ExperimentError& error) {
    EXPECT_MENTIONS(error.what(), "override path 'tra\\x01ining.steps' does not exist");
    EXPECT_TRUE(testing::is_safe_message(error.what())) << error.what();
  }
}

// The fuzz harness run on the code before the limits (under UBSan): each of
// these overflowed a signed product while validating.
TEST(FuzzRegressions, ProductsThatOverflowedAreProblems) {
  const std::string model = R"("model": {"input": [2], "layers": [{"type": "linear", "out": 16},
                                {"type": "relu"}, {"type": "linear", "out": 3}]})";
  // pp x chunks as an int (parallel_plan.h).
  EXPECT_MENTIONS(testing::parse_error("{" + model + R"(, "training": {"batch_size": 50000},
      "parallel": {"pp": 50000, "chunks": 50000, "schedule": "interleaved-1f1b", "microbatches": 50000}})"),
                  "parallel.pp = 50000 is more than the 1024 PipeLab plans");
  // model.input's product (model_spec.cpp).
  EXPECT_MENTIONS(testing::parse_error(R"({"model": {"input": [1099511627776, 1099511627776],
      "layers": [{"type": "linear", "out": 3}]}})"),
                  "model.input's dimensions multiply to more than");
  // Micro-batch size times bytes per sample (stage_profile.cpp).
  EXPECT_MENTIONS(testing::parse_error("{" + model + R"(, "training": {"batch_size": 4611686018427387904}})"),
                  "a micro-batch of 4611686018427387904 samples keeps and sends more than");
}

}  // namespace
}  // namespace pipelab
