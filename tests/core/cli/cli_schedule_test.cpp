#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli_test_support.h"

namespace pipelab {
namespace {

using test::run;

TEST(CliSchedule, ZbVHoldsTwoChunksPerDeviceInAV) {
  const auto result = run({"schedule", "--schedule", "zb-v", "--stages", "2", "--microbatches", "4",
                           "--format", "json"});
  ASSERT_EQ(result.code, 0) << result.err;
  const auto json = nlohmann::json::parse(result.out);
  EXPECT_EQ(json["schedule"], "zb-v");
  EXPECT_EQ(json["chunks"], 2);
  ASSERT_EQ(json["devices"].size(), 2u);
  // Device 0 runs stages 0 and 3, device 1 stages 1 and 2.
  for (int device = 0; device < 2; ++device)
    for (const auto& op : json["devices"][device]["ops"])
      if (op.contains("stage")) {
        const int stage = op["stage"];
        EXPECT_TRUE(stage == device || stage == 3 - device) << "device " << device << " stage " << stage;
      }
}

TEST(CliSchedule, DualPipeVSetsTwoChunksAndPairsForwardsWithBackwards) {
  const auto result = run({"schedule", "--schedule", "dualpipev", "--stages", "2", "--microbatches",
                           "4", "--format", "json"});
  ASSERT_EQ(result.code, 0) << result.err;
  const auto json = nlohmann::json::parse(result.out);
  EXPECT_EQ(json["schedule"], "dualpipev");
  EXPECT_EQ(json["chunks"], 2);
  ASSERT_EQ(json["devices"].size(), 2u);
  int fused_backwards = 0;
  for (int device = 0; device < 2; ++device)
    for (const auto& op : json["devices"][device]["ops"])
      if (op.contains("stage")) {
        const int stage = op["stage"];
        EXPECT_TRUE(stage == device || stage == 3 - device) << "device " << device << " stage " << stage;
        if (op["kind"] == "B") ++fused_backwards;
      }
  EXPECT_GT(fused_backwards, 0);  // the steady phase's pairs hold fused backwards
}

TEST(CliSchedule, HelpListsEverySchedule) {
  const auto result = run({"--help"});
  ASSERT_EQ(result.code, 0) << result.err;
  // The list is read from the schedule table.
  EXPECT_NE(result.out.find("schedules: gpipe, 1f1b, interleaved-1f1b, zb-h1, zb-v, dualpipev, pipedream, "
                            "pipedream-2bw, pipemare\nexit codes:"),
            std::string::npos)
      << result.out;
}

TEST(CliSchedule, JsonListsEachDevicesComputeOps) {
  const auto result = run({"schedule", "--schedule", "1f1b", "--stages", "4", "--microbatches", "8",
                           "--format", "json"});
  ASSERT_EQ(result.code, 0) << result.err;
  const auto json = nlohmann::json::parse(result.out);
  EXPECT_EQ(json["schedule"], "1f1b");
  EXPECT_EQ(json["stages"], 4);
  EXPECT_EQ(json["microbatches"], 8);
  ASSERT_EQ(json["devices"].size(), 4u);
  for (int device = 0; device < 4; ++device) {
    const auto& ops = json["devices"][device]["ops"];
    int forwards = 0, backwards = 0, updates = 0, warmup = 0;
    bool seen_backward = false;
    for (const auto& op : ops) {
      const std::string kind = op["kind"];
      if (kind == "F") {
        ++forwards;
        if (!seen_backward) ++warmup;
      }
      if (kind == "B") {
        ++backwards;
        seen_backward = true;
      }
      if (kind == "U") ++updates;
    }
    EXPECT_EQ(forwards, 8);
    EXPECT_EQ(backwards, 8);
    EXPECT_EQ(updates, 1);
    // 1F1B: warm-up of min(p - s - 1, m) forwards, then the steady state's first F.
    EXPECT_EQ(warmup, std::min(4 - device - 1, 8) + 1) << "device " << device;
  }
}

TEST(CliSchedule, ZeroBubbleUsesSplitBackward) {
  const auto result = run({"schedule", "--schedule", "zb-h1", "--stages", "2", "--microbatches",
                           "4", "--format", "json"});
  ASSERT_EQ(result.code, 0) << result.err;
  const auto json = nlohmann::json::parse(result.out);
  int bi = 0, bw = 0;
  for (const auto& op : json["devices"][0]["ops"]) {
    bi += op["kind"] == "BI";
    bw += op["kind"] == "BW";
  }
  EXPECT_EQ(bi, 4);
  EXPECT_EQ(bw, 4);
}

TEST(CliSchedule, TextGridShowsOneRowPerDevice) {
  const auto result = run({"schedule", "--schedule", "gpipe", "--stages", "3", "--microbatches", "2"});
  ASSERT_EQ(result.code, 0) << result.err;
  EXPECT_NE(result.out.find("dev 0"), std::string::npos);
  EXPECT_NE(result.out.find("dev 2"), std::string::npos);
  EXPECT_EQ(result.out.find("dev 3"), std::string::npos);
  EXPECT_NE(result.out.find("F1"), std::string::npos);
}

TEST(CliSchedule, UserErrorsExitTwoWithOneLine) {
  struct Case {
    std::vector<std::string> args;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {{"schedule", "--stages", "4", "--microbatches", "8"}, "--schedule is required"},
      {{"schedule", "--schedule", "zb", "--stages", "4", "--microbatches", "8"}, "valid: gpipe, 1f1b"},
      {{"schedule", "--schedule", "1f1b", "--stages", "four", "--microbatches", "8"},
       "--stages must be an integer"},
      {{"schedule", "--schedule", "1f1b", "--stages", "0", "--microbatches", "8"}, "out of range"},
      {{"schedule", "--schedule", "1f1b", "--stages", "4", "--microbatches", "8", "--chunks", "2"},
       "needs --schedule interleaved-1f1b"},
      {{"schedule", "--schedule", "interleaved-1f1b", "--stages", "4", "--microbatches", "9"},
       "multiple of its round count"},
      {{"schedule", "--schedule", "zb-v", "--stages", "4", "--microbatches", "8", "--chunks", "3"},
       "exactly 2 chunks per device"},
      {{"schedule", "--schedule", "dualpipev", "--stages", "4", "--microbatches", "8", "--chunks", "1"},
       "does not fit --schedule dualpipev, which holds exactly 2 chunks per device"},
      {{"schedule", "--schedule", "dualpipev", "--stages", "4", "--microbatches", "6"},
       "dualpipev needs microbatches (6) >= its stage count 2 * pp = 8"},
      {{"schedule", "--schedule", "1f1b", "--stages", "4", "--microbatches", "8", "--format", "xml"},
       "--format must be text or json"},
      {{"schedule", "--schedule", "1f1b", "--stages", "4", "--bogus", "1"}, "unknown option '--bogus'"},
      {{"frobnicate"}, "unknown command"},
  };
  for (const auto& c : cases) {
    const auto result = run(c.args);
    EXPECT_EQ(result.code, 2) << c.expected;
    EXPECT_NE(result.err.find(c.expected), std::string::npos) << result.err;
    EXPECT_EQ(std::count(result.err.begin(), result.err.end(), '\n'), 1) << result.err;
  }
}

}  // namespace
}  // namespace pipelab
