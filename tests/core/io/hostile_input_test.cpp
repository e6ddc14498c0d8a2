// Experiment text that is deep, huge or strange: each gets a clear error that
// quotes at most a short, escaped excerpt, never a crash or an allocation the
// machine cannot make.
#include <gtest/gtest.h>

#include <fstream>

#include "core/io/json_document.h"
#include "core/model/model_limits.h"
#include "tests/core/io/io_test_support.h"
#include "tests/core/safe_message.h"

namespace pipelab {
namespace {

using testing::is_safe_message;
using testing::parse_error;
using testing::small_experiment_json;

// Every problem validate_experiment finds in `document`, on one line each.
std::string problems_of(const nlohmann::json& document) {
  std::string text;
  for (const std::string& problem : validate_experiment(parse_experiment_unvalidated(document.dump())))
    text += problem + "\n";
  return text;
}

std::string override_error(const std::string& assignment) {
  Experiment experiment = default_experiment();
  try {
    apply_override(experiment, assignment);
  } catch (const ExperimentError& error) {
    return error.what();
  }
  return "";
}

TEST(HostileExperiment, NestingDeeperThanTheLimitIsRefused) {
  // Deep enough to overflow the stack of any recursive walk over the document.
  const int depth = 100000;
  const std::string deep = std::string(depth, '[') + std::string(depth, ']');
  const std::string message = parse_error("{\"name\": " + deep + "}");
  EXPECT_MENTIONS(message, "nested more than 64 levels");
  // The limit itself still parses (and is then the wrong type for a name).
  const std::string at_limit = std::string(kMaxJsonDepth - 1, '[') + std::string(kMaxJsonDepth - 1, ']');
  EXPECT_MENTIONS(parse_error("{\"name\": " + at_limit + "}"), "name must be a string");
  EXPECT_MENTIONS(override_error("name=" + deep), "nested more than 64 levels");
}

TEST(HostileExperiment, DocumentsLargerThanTheLimitAreRefused) {
  const std::string padding(kMaxExperimentBytes, ' ');
  EXPECT_MENTIONS(parse_error(padding + small_experiment_json().dump()), "larger than the 4 MiB");

  testing::TempFolder folder;
  const std::string path = (folder.path() / "huge.json").string();
  std::ofstream(path) << padding << small_experiment_json().dump();
  try {
    load_experiment(path);
    FAIL() << "a file over the size limit loaded";
  } catch (const ExperimentError& error) {
    EXPECT_MENTIONS(error.what(), "larger than the 4 MiB");
  }
}

TEST(HostileExperiment, AnEndlessFileIsNotReadWhole) {
  if (!std::filesystem::exists("/dev/zero")) GTEST_SKIP() << "no /dev/zero here";
  try {
    load_experiment("/dev/zero");
    FAIL() << "/dev/zero loaded";
  } catch (const ExperimentError& error) {
    EXPECT_MENTIONS(error.what(), "larger than the 4 MiB");
  }
}

TEST(HostileExperiment, BinaryGarbageGivesAShortSafeMessage) {
  std::string garbage;
  for (int i = 0; i < 4096; ++i) garbage += static_cast<char>((i * 151 + 7) % 256);
  const std::string message = parse_error(garbage);
  EXPECT_EQ(message.rfind("not valid JSON: ", 0), 0u) << message;
  EXPECT_TRUE(is_safe_message(message));
  EXPECT_LT(message.size(), 300u);
  // Invalid UTF-8 inside a string: nlohmann quotes the bytes it read.
  const std::string in_string = parse_error("{\"name\": \"abc\xff\xfe\x1b[2J\"}");
  EXPECT_TRUE(is_safe_message(in_string));
  EXPECT_MENTIONS(in_string, "\\xFF");
  // A string that never ends: the message does not quote all of it.
  EXPECT_LT(parse_error("{\"name\": \"" + std::string(1 << 20, 'a')).size(), 300u);
}

TEST(HostileExperiment, KeysAndNamesAreQuotedEscaped) {
  auto document = small_experiment_json();
  document["parallel"]["pp\nrm -rf"] = 1;
  const std::string unknown_key = parse_error(document.dump());
  EXPECT_TRUE(is_safe_message(unknown_key));
  EXPECT_MENTIONS(unknown_key, "unknown key 'parallel.pp\\nrm -rf'");

  document = small_experiment_json();
  document["parallel"]["schedule"] = "1f1b\x1b[31m" + std::string(500, 'x');
  const std::string unknown_name = parse_error(document.dump());
  EXPECT_TRUE(is_safe_message(unknown_name));
  EXPECT_MENTIONS(unknown_name, "parallel.schedule = '1f1b\\x1B[31mxxx");
  EXPECT_LT(unknown_name.size(), 300u);
}

TEST(HostileExperiment, AMegabyteKeyIsQuotedShort) {
  // Without the length check, suggesting the closest valid key compared all 3 MiB
  // against every valid key, character by character.
  const std::string message = parse_error("{\"" + std::string(3 << 20, 'k') + "\": 1}");
  EXPECT_MENTIONS(message, "unknown key 'kkkk");
  EXPECT_LT(message.size(), 300u);
}

TEST(HostileExperiment, OverridesWithOddBytesOrHugeIndicesAreErrors) {
  const std::string invalid_utf8 = override_error("name=caf\xe9");
  EXPECT_MENTIONS(invalid_utf8, "not valid UTF-8");
  EXPECT_TRUE(is_safe_message(invalid_utf8));
  // An index past 2^64 once escaped as std::out_of_range (an internal error).
  EXPECT_MENTIONS(override_error("model.layers.99999999999999999999999.out=4"), "does not exist");
  EXPECT_MENTIONS(override_error("model.layers.-1.out=4"), "does not exist");
  EXPECT_TRUE(is_safe_message(override_error("par\xff\n.pp=2")));
  EXPECT_MENTIONS(override_error("parallel.pp=1e400"), "not usable JSON");
}

TEST(HostileExperiment, MoreLayersThanTheLimitIsAProblem) {
  auto document = small_experiment_json();
  document["model"]["layers"] = nlohmann::json::array();
  for (int i = 0; i <= kMaxLayers; ++i) document["model"]["layers"].push_back({{"type", "relu"}});
  document["model"]["layers"].push_back({{"type", "linear"}, {"out", 3}});
  EXPECT_MENTIONS(problems_of(document), "more than the 10000 PipeLab handles");
}

TEST(HostileExperiment, WidthsWhoseProductsOverflowAreProblems) {
  auto document = small_experiment_json();
  document["model"]["input"] = {1 << 20, 1 << 20, 1 << 20, 1 << 20};  // 2^80 values per sample
  EXPECT_MENTIONS(problems_of(document), "model.input's dimensions multiply to more than");

  document = small_experiment_json();
  document["model"]["layers"][0]["out"] = int64_t{1} << 50;
  EXPECT_MENTIONS(problems_of(document), "model.layers[0]: linear out = 1125899906842624 is more than");

  // Each width fits, but 2^30 x 2^30 weights do not.
  document = small_experiment_json();
  document["model"]["input"] = {int64_t{1} << 30};
  document["model"]["layers"][0]["out"] = int64_t{1} << 30;
  EXPECT_MENTIONS(problems_of(document), "parameters, more than PipeLab handles");
}

TEST(HostileExperiment, MicrobatchesLargerThanMemoryCanHoldAreProblems) {
  auto document = small_experiment_json();
  document["training"]["batch_size"] = int64_t{1} << 60;
  document["parallel"]["microbatches"] = 1;
  EXPECT_MENTIONS(problems_of(document), "a micro-batch of 1152921504606846976 samples keeps and sends more than");
}

TEST(HostileExperiment, ParallelDegreesPastTheLimitsAreProblems) {
  auto document = small_experiment_json();
  document["parallel"]["dp"] = 1 << 20;
  document["parallel"]["tp"] = 1 << 20;
  document["parallel"]["pp"] = 1 << 20;  // dp x tp x pp would overflow an int
  const std::string problems = problems_of(document);
  EXPECT_MENTIONS(problems, "parallel.dp = 1048576 is more than the 1024 PipeLab plans");
  EXPECT_MENTIONS(problems, "parallel.tp = 1048576 is more than the 64");
  EXPECT_MENTIONS(problems, "parallel.pp = 1048576 is more than the 1024");

  // Each degree fits; together they make far too large a schedule.
  document = small_experiment_json();
  document["model"]["layers"] = nlohmann::json::array();
  for (int i = 0; i < 1024; ++i) document["model"]["layers"].push_back({{"type", "relu"}});
  document["parallel"] = {{"dp", 1024}, {"pp", 1024}, {"microbatches", 65536}, {"partition", "uniform"}};
  document["training"]["batch_size"] = int64_t{1024} * 65536;
  EXPECT_MENTIONS(problems_of(document), "makes a schedule of about");
}

TEST(HostileExperiment, ABalancedSplitTooLongToSearchIsAProblem) {
  auto document = small_experiment_json();
  document["model"]["layers"] = nlohmann::json::array();
  for (int i = 0; i + 1 < kMaxLayers; ++i) document["model"]["layers"].push_back({{"type", "relu"}});
  document["model"]["layers"].push_back({{"type", "linear"}, {"out", 3}});
  document["parallel"]["pp"] = 64;
  document["parallel"]["microbatches"] = 64;
  document["training"]["batch_size"] = 64;
  EXPECT_MENTIONS(problems_of(document), "would search too long for the best split of 10000 layers");
  document["parallel"]["partition"] = "uniform";
  EXPECT_EQ(problems_of(document), "");
}

}  // namespace
}  // namespace pipelab
