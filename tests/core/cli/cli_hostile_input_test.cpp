// pipelab-cli given binary garbage, odd bytes and huge numbers: exit code 2
// with one safe line on stderr, never a crash or an internal error.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "tests/core/cli/cli_test_support.h"
#include "tests/core/safe_message.h"

namespace pipelab {
namespace {

using testing::is_safe_message;

// One line: "pipelab-cli: ...\n".
void expect_one_safe_usage_line(const test::CliResult& result) {
  EXPECT_EQ(result.code, kExitUsage) << result.err;
  ASSERT_FALSE(result.err.empty());
  EXPECT_EQ(result.err.find('\n'), result.err.size() - 1) << result.err;
  EXPECT_TRUE(is_safe_message(result.err.substr(0, result.err.size() - 1)));
}

TEST(CliHostileInput, OddBytesInArgumentsAreEscaped) {
  const auto unknown_command = test::run({"sim\xff\x1b[2Julate"});
  expect_one_safe_usage_line(unknown_command);
  EXPECT_NE(unknown_command.err.find("unknown command 'sim\\xFF\\x1B[2Julate'"), std::string::npos)
      << unknown_command.err;
  expect_one_safe_usage_line(test::run({"schedule", "--sched\nule", "1f1b"}));
  expect_one_safe_usage_line(
      test::run({"schedule", "--schedule", "1f1b\xc3", "--stages", "2", "--microbatches", "2"}));
  expect_one_safe_usage_line(test::run({"simulate", "--schedule", "gpipe", "--stages", "2",
                                        "--microbatches", "2", "--cost", "f=\xff"}));
}

TEST(CliHostileInput, BinaryGarbageAsAnExperimentFile) {
  const std::filesystem::path path = std::filesystem::temp_directory_path() / "pipelab-cli-garbage.json";
  {
    std::ofstream file(path, std::ios::binary);
    for (int i = 0; i < 2048; ++i) file.put(static_cast<char>((i * 97 + 13) % 256));
  }
  const auto result = test::run({"validate", "--config", path.string()});
  std::filesystem::remove(path);
  expect_one_safe_usage_line(result);
  EXPECT_NE(result.err.find("not valid JSON"), std::string::npos) << result.err;
  EXPECT_LT(result.err.size(), 400u);
}

TEST(CliHostileInput, OverridesThatOverflowOrAreNotUtf8) {
  const std::string config = test::example("mnist_mlp_1f1b.json");
  expect_one_safe_usage_line(test::run({"validate", "--config", config, "--set", "name=\xff\xfe"}));
  expect_one_safe_usage_line(
      test::run({"validate", "--config", config, "--set", "model.layers.18446744073709551616.out=1"}));
  const auto huge = test::run({"validate", "--config", config, "--set", "model.layers.0.out=1e15"});
  expect_one_safe_usage_line(huge);
  EXPECT_NE(huge.err.find("linear out = 1000000000000000 is more than"), std::string::npos) << huge.err;
  const auto degrees = test::run({"validate", "--config", config, "--set", "parallel.dp=2147483647"});
  expect_one_safe_usage_line(degrees);
  EXPECT_NE(degrees.err.find("parallel.dp = 2147483647 is more than the 1024"), std::string::npos)
      << degrees.err;
}

}  // namespace
}  // namespace pipelab
