#include <cstdio>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli_test_support.h"

namespace pipelab {
namespace {

using test::example;
using test::run;

double bubble_of(const std::vector<std::string>& args) {
  const auto result = run(args);
  EXPECT_EQ(result.code, 0) << result.err;
  return nlohmann::json::parse(result.out)["bubble_fraction"].get<double>();
}

TEST(CliSimulate, PipelineBubbleMatchesTheFormula) {
  for (const std::string schedule : {"gpipe", "1f1b"}) {
    const auto result = run({"simulate", "--schedule", schedule, "--stages", "4", "--microbatches", "8"});
    ASSERT_EQ(result.code, 0) << result.err;
    const auto json = nlohmann::json::parse(result.out);
    EXPECT_NEAR(json["bubble_fraction"].get<double>(), 3.0 / 11.0, 1e-9);
    EXPECT_NEAR(json["bubble_fraction_theory"].get<double>(), 3.0 / 11.0, 1e-9);
    ASSERT_EQ(json["per_device"].size(), 4u);
    for (const auto& device : json["per_device"]) {
      EXPECT_TRUE(device.contains("peak_bytes"));
      EXPECT_TRUE(device["peak_bytes"].contains("activations"));
      EXPECT_TRUE(device.contains("peak_inflight_microbatches"));
      EXPECT_TRUE(device.contains("weight_versions"));
    }
  }
}

TEST(CliSimulate, InterleavedAndZeroBubbleBeat1F1B) {
  const double one_f_one_b = bubble_of({"simulate", "--schedule", "1f1b", "--stages", "4", "--microbatches", "8"});
  const double interleaved = bubble_of({"simulate", "--schedule", "interleaved-1f1b", "--stages", "4",
                                        "--microbatches", "8", "--chunks", "2"});
  const double zero_bubble = bubble_of({"simulate", "--schedule", "zb-h1", "--stages", "4", "--microbatches", "8"});
  EXPECT_LT(interleaved, one_f_one_b);
  EXPECT_LT(zero_bubble, one_f_one_b);
}

TEST(CliSimulate, CostsChangeTheMakespan) {
  const auto free_comm = run({"simulate", "--schedule", "gpipe", "--stages", "4", "--microbatches", "4"});
  const auto slow_comm = run({"simulate", "--schedule", "gpipe", "--stages", "4", "--microbatches", "4",
                              "--cost", "f=1,b=1,w=1,comm=0.5"});
  ASSERT_EQ(free_comm.code, 0);
  ASSERT_EQ(slow_comm.code, 0) << slow_comm.err;
  EXPECT_GT(nlohmann::json::parse(slow_comm.out)["makespan"].get<double>(),
            nlohmann::json::parse(free_comm.out)["makespan"].get<double>());
}

TEST(CliSimulate, PipeDreamVersionsPerStage) {
  const auto result = run({"simulate", "--schedule", "pipedream", "--stages", "4", "--microbatches", "8"});
  ASSERT_EQ(result.code, 0) << result.err;
  const auto json = nlohmann::json::parse(result.out);
  for (int stage = 0; stage < 4; ++stage)
    EXPECT_EQ(json["per_device"][stage]["weight_versions"].get<int>(), 4 - stage);
}

TEST(CliSimulate, PipeMareKeepsOneVersionAndStashesNothing) {
  const auto result = run({"simulate", "--schedule", "pipemare", "--stages", "4", "--microbatches", "8"});
  ASSERT_EQ(result.code, 0) << result.err;
  const auto json = nlohmann::json::parse(result.out);
  for (int stage = 0; stage < 4; ++stage) {
    EXPECT_EQ(json["per_device"][stage]["weight_versions"].get<int>(), 1);
    EXPECT_EQ(json["per_device"][stage]["peak_bytes"]["stashed_weights"].get<double>(), 0);
  }
  // The example trains its MNIST MLP with both techniques: the velocity is one
  // more weights-sized buffer of optimizer state beside momentum.
  const auto example_run = run({"simulate", "--config", example("pipemare.json")});
  ASSERT_EQ(example_run.code, 0) << example_run.err;
  const auto device_0 = nlohmann::json::parse(example_run.out)["per_device"][0]["peak_bytes"];
  EXPECT_EQ(device_0["stashed_weights"].get<double>(), 0);
  EXPECT_EQ(device_0["optimizer_state"].get<double>(), 2 * device_0["weights"].get<double>());
}

TEST(CliSimulate, ConfigWithOverridesAndTraceFiles) {
  const auto dir = std::filesystem::temp_directory_path() / "pipelab_cli_simulate_test";
  std::filesystem::create_directories(dir);
  const std::string trace_path = (dir / "trace.json").string();
  const std::string csv_prefix = (dir / "run").string();
  const auto result = run({"simulate", "--config", example("mnist_mlp_1f1b.json"), "--set",
                           "parallel.schedule=gpipe", "--set", "parallel.microbatches=4", "--trace",
                           trace_path, "--csv", csv_prefix});
  ASSERT_EQ(result.code, 0) << result.err;
  const auto json = nlohmann::json::parse(result.out);
  EXPECT_EQ(json["schedule"], "gpipe");
  EXPECT_EQ(json["microbatches"], 4);
  EXPECT_EQ(json["memory_unit"], "bytes");
  EXPECT_GT(json["per_device"][0]["peak_bytes"]["weights"].get<double>(), 0);
  std::ifstream trace_file(trace_path);
  const auto trace = nlohmann::json::parse(trace_file);
  EXPECT_FALSE(trace["traceEvents"].empty());
  EXPECT_TRUE(std::filesystem::exists(csv_prefix + "_events.csv"));
  EXPECT_TRUE(std::filesystem::exists(csv_prefix + "_memory.csv"));
  std::filesystem::remove_all(dir);
}

TEST(CliSimulate, UserErrorsExitTwo) {
  const auto dir = std::filesystem::temp_directory_path() / "pipelab_cli_errors_test";
  std::filesystem::create_directories(dir);
  const std::string not_json = (dir / "bad.json").string();
  std::ofstream(not_json) << "{ this is not json";
  struct Case {
    std::vector<std::string> args;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {{"simulate", "--config", (dir / "missing.json").string()}, "missing.json"},
      {{"simulate", "--config", not_json}, "not valid JSON"},
      {{"simulate", "--config", example("mnist_mlp_1f1b.json"), "--set", "parallel.microbatches=12"},
       "does not divide"},
      {{"simulate", "--config", example("mnist_mlp_1f1b.json"), "--set", "parallel.pp=8"},
       "splittable layers"},
      {{"simulate", "--config", example("mnist_mlp_1f1b.json"), "--set", "parallel.pp=1", "--set",
        "parallel.tp=3"},
       "tp = 3 does not divide"},
      {{"simulate", "--config", example("mnist_mlp_1f1b.json"), "--set", "parallel.schedule=zb"},
       "valid: gpipe"},
      {{"simulate", "--config", example("mnist_mlp_1f1b.json"), "--set", "parallel.bogus=1"},
       "bogus"},
      {{"simulate", "--config", example("mnist_mlp_1f1b.json"), "--stages", "2"},
       "cannot be combined with --config"},
      {{"simulate", "--schedule", "gpipe", "--stages", "2", "--microbatches", "2", "--cost", "f=x"},
       "--cost f must be a number"},
      {{"simulate", "--schedule", "gpipe", "--stages", "2", "--microbatches", "2", "--cost", "q=1"},
       "valid: f, b, w, comm, u"},
      {{"simulate", "--schedule", "gpipe", "--stages", "2", "--microbatches", "2", "--trace",
        (dir / "no_such_dir" / "t.json").string()},
       "no_such_dir"},
  };
  for (const auto& c : cases) {
    const auto result = run(c.args);
    EXPECT_EQ(result.code, 2) << c.expected << ": " << result.err;
    EXPECT_NE(result.err.find(c.expected), std::string::npos) << result.err;
  }
  std::filesystem::remove_all(dir);
}

TEST(CliValidate, ExamplesAreValid) {
  // The app's preset files (examples/presets/) are experiment files too.
  for (const auto& entry :
       std::filesystem::recursive_directory_iterator(std::string(PIPELAB_SOURCE_DIR) + "/examples")) {
    if (entry.path().extension() != ".json") continue;
    const auto result = run({"validate", "--config", entry.path().string()});
    EXPECT_EQ(result.code, 0) << entry.path() << ": " << result.err;
  }
}

TEST(CliDevices, ListsTheCpuWithoutCuda) {
  const auto result = run({"devices"});
  ASSERT_EQ(result.code, 0);
  EXPECT_NE(result.out.find("cpu:"), std::string::npos);
  EXPECT_NE(result.out.find("cuda:"), std::string::npos);
}

// Without --trace or --csv the simulator records no events or memory samples,
// and a synchronous run's replica 0 stands for every replica (simulated
// alone, each replica listed with its figures); the summary must not change
// for either: with a trace every device of every replica is simulated.
TEST(CliSimulate, TheSummaryIsTheSameWithAndWithoutATrace) {
  const std::filesystem::path trace =
      std::filesystem::temp_directory_path() / "pipelab_cli_simulate_summary_trace.json";
  for (const std::vector<std::string>& plan :
       {std::vector<std::string>{"--schedule", "zb-h1", "--stages", "4", "--microbatches", "8",
                                 "--dp", "2"},
        std::vector<std::string>{"--config", example("mnist_mlp_1f1b.json")},
        std::vector<std::string>{"--config", example("dp_tp_pp_mix.json")},
        std::vector<std::string>{"--config", example("moe_expert_parallel.json")}}) {
    std::vector<std::string> plain = {"simulate"};
    plain.insert(plain.end(), plan.begin(), plan.end());
    std::vector<std::string> traced = plain;
    traced.insert(traced.end(), {"--trace", trace.string()});
    const auto without = run(plain);
    const auto with = run(traced);
    ASSERT_EQ(without.code, 0) << without.err;
    ASSERT_EQ(with.code, 0) << with.err;
    EXPECT_EQ(without.out, with.out);
    EXPECT_TRUE(std::filesystem::exists(trace));
    std::filesystem::remove(trace);
  }
}

// The Transformer examples simulate to the memory the published analysis
// gives: GPT-3's first device holds its blocks' 34 s b h / t bytes (sequence
// parallel, selective recompute) per sample for every micro-batch in flight.
TEST(CliSimulate, GptThreeFitsAnEightyGigabyteGpuAsMegatronRunsIt) {
  // The whole run: eight replicas of the example's tp 8 x pp 16 (1,024 GPUs).
  const auto result = run({"simulate", "--config", example("gpt3_175b_predict.json"), "--set", "parallel.dp=8",
                           "--set", "training.batch_size=1536"});
  ASSERT_EQ(result.code, 0) << result.err;
  const auto summary = nlohmann::json::parse(result.out);
  const auto& device = summary["per_device"][0];
  const double s = 2048, h = 12288, t = 8, blocks = 6, samples = 3;
  const double inflight = device["peak_inflight_microbatches"].get<double>();
  EXPECT_EQ(inflight, 16);  // 1F1B: p micro-batches on the first stage
  const double blocks_bytes = inflight * samples * blocks * s * h * 34 / t;
  const double activations = device["peak_bytes"]["activations"].get<double>();
  EXPECT_GE(activations, blocks_bytes);
  // Plus one running backward's gradient buffers (a sequence-parallel block
  // with dropout: 6 s h bf16 values per sample, transformer_block.h) and the
  // embedding's small share.
  const double backward_buffers = samples * 6 * s * h * 2;
  EXPECT_GE(activations, blocks_bytes + backward_buffers);
  EXPECT_LT(activations, (blocks_bytes + backward_buffers) * 1.01);
  // bf16-mixed Adam: 16 bytes per parameter in weights, gradients and optimizer state.
  const double state = device["peak_bytes"]["weights"].get<double>() + device["peak_bytes"]["gradients"].get<double>() +
                       device["peak_bytes"]["optimizer_state"].get<double>();
  EXPECT_DOUBLE_EQ(state, 8 * device["peak_bytes"]["weights"].get<double>());
  EXPECT_LT(device["peak_bytes"]["total"].get<double>(), 80e9);
}

}  // namespace
}  // namespace pipelab
