#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli_test_support.h"
#include "core/io/run_file.h"

namespace pipelab {
namespace {

using test::example;
using test::run;

class CliTrain : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("pipelab_cli_train_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  std::filesystem::path dir_;
};

TEST_F(CliTrain, PrintsTheSummaryAndWritesTraces) {
  const auto result = run({"train", "--config", example("spiral_interleaved.json"), "--steps", "6",
                           "--set", "training.eval_every=3", "--quiet", "--trace", path("t.json"),
                           "--csv", path("run"), "--summary", path("summary.json")});
  ASSERT_EQ(result.code, 0) << result.err;
  const auto json = nlohmann::json::parse(result.out);
  EXPECT_EQ(json["status"], "finished");
  EXPECT_EQ(json["steps"], 6);
  ASSERT_EQ(json["loss"].size(), 6u);
  for (const char* key : {"final_loss", "val_accuracy", "samples_per_s", "step_time_ms_median",
                          "bubble_fraction_measured", "bubble_fraction_simulated"})
    EXPECT_TRUE(json[key].is_number()) << key;
  EXPECT_EQ(json["final_loss"].get<double>(), json["loss"].back().get<double>());
  ASSERT_FALSE(json["peak_bytes"].empty());
  EXPECT_GT(json["peak_bytes"][0]["weights"].get<double>(), 0);
  std::ifstream summary(path("summary.json"));
  EXPECT_EQ(nlohmann::json::parse(summary), json);
  std::ifstream trace(path("t.json"));
  EXPECT_FALSE(nlohmann::json::parse(trace)["traceEvents"].empty());
  EXPECT_TRUE(std::filesystem::exists(path("run_steps.csv")));
  // The replay lays the measured durations on the schedule: a bubble in [0, 1).
  ASSERT_TRUE(json["bubble_fraction_replayed"].is_number());
  EXPECT_GE(json["bubble_fraction_replayed"].get<double>(), 0.0);
  EXPECT_LT(json["bubble_fraction_replayed"].get<double>(), 1.0);
}

TEST_F(CliTrain, TheSummaryListsEachStepsExpertLoad) {
  const auto result = run({"train", "--config", example("moe_switch_copy.json"), "--steps", "3", "--quiet",
                           "--set", "training.eval_every=0"});
  ASSERT_EQ(result.code, 0) << result.err;
  const auto json = nlohmann::json::parse(result.out);
  ASSERT_EQ(json["expert_load"].size(), 3u);
  for (const auto& step : json["expert_load"]) {
    EXPECT_GT(step["aux_loss"].get<double>(), 0.0);
    ASSERT_EQ(step["layers"].size(), 2u);  // the example's two blocks with experts
    EXPECT_EQ(step["layers"][0]["layer"], 1);
    int64_t routed = 0;
    for (const auto& tokens : step["layers"][0]["routed"]) routed += tokens.get<int64_t>();
    EXPECT_EQ(routed, 64 * 16);  // top-1: each of the batch's 64 x 16 positions once
    EXPECT_EQ(step["layers"][0]["dropped"].size(), 4u);
  }
  // Without moe layers there is no such entry.
  const auto plain = run({"train", "--config", example("spiral_interleaved.json"), "--steps", "1", "--quiet"});
  EXPECT_FALSE(nlohmann::json::parse(plain.out).contains("expert_load"));
}

TEST_F(CliTrain, ReplayTraceIsWritten) {
  const auto result = run({"train", "--config", example("spiral_interleaved.json"), "--steps", "3",
                           "--quiet", "--replay-trace", path("replay.json")});
  ASSERT_EQ(result.code, 0) << result.err;
  std::ifstream trace(path("replay.json"));
  EXPECT_FALSE(nlohmann::json::parse(trace)["traceEvents"].empty());
}

TEST_F(CliTrain, SaveRunWritesARunFileTheAppReopens) {
  const auto result = run({"train", "--config", example("spiral_interleaved.json"), "--steps", "3",
                           "--quiet", "--save-run", path("run.json")});
  ASSERT_EQ(result.code, 0) << result.err;
  const RunRecord record = load_run(path("run.json"));
  EXPECT_EQ(record.trace.source, "measured");
  EXPECT_EQ(record.trace.steps.size(), 3u);
  EXPECT_FALSE(record.trace.events.empty());
  EXPECT_NE(record.name.find(record.experiment.name), std::string::npos);

  const auto unwritable = run({"train", "--config", example("spiral_interleaved.json"), "--steps", "1",
                               "--quiet", "--save-run", path("no-such-folder/run.json")});
  EXPECT_EQ(unwritable.code, 2);
  EXPECT_NE(unwritable.err.find("--save-run: cannot write"), std::string::npos) << unwritable.err;
}

TEST_F(CliTrain, CalibrateWritesHardwareFilesThatAPredictionUses) {
  const auto result = run({"calibrate", "--config", example("spiral_interleaved.json"), "--steps",
                           "3", "--write", path("this-cpu.json")});
  ASSERT_EQ(result.code, 0) << result.err;
  const auto json = nlohmann::json::parse(result.out);
  EXPECT_GT(json["compute_samples"].get<int>(), 0);
  EXPECT_GT(json["calibrated"]["gemm_gflop_s"].get<double>(), 0.0);
  EXPECT_NE(json["calibrated"]["gemm_gflop_s"], json["base"]["gemm_gflop_s"]);
  // Two runs at different micro-batch counts, each predicted after the fit.
  ASSERT_EQ(json["runs"].size(), 2u);
  EXPECT_NE(json["runs"][0]["microbatches"], json["runs"][1]["microbatches"]);
  for (const auto& measured : json["runs"])
    EXPECT_GT(measured["predicted_step_ms_calibrated"].get<double>(), 0.0);
  ASSERT_EQ(json["written"].size(), 2u);

  // The device file names its node file beside it; a prediction on them
  // gives the step calibrate predicted for the experiment as it is.
  const auto simulated = run({"simulate", "--config", example("spiral_interleaved.json"), "--set",
                              "simulation.profile=" + path("this-cpu.json")});
  ASSERT_EQ(simulated.code, 0) << simulated.err;
  const auto prediction = nlohmann::json::parse(simulated.out);
  EXPECT_EQ(prediction["throughput"]["device"], "this-cpu");
  EXPECT_NEAR(prediction["throughput"]["step_time"].get<double>() * 1e3,
              json["runs"][0]["predicted_step_ms_calibrated"].get<double>(),
              json["runs"][0]["predicted_step_ms_calibrated"].get<double>() * 1e-6);

  const auto not_json = run({"calibrate", "--config", example("spiral_interleaved.json"), "--steps",
                             "1", "--write", path("this-cpu.txt")});
  EXPECT_EQ(not_json.code, 2);
  EXPECT_NE(not_json.err.find("must end in .json"), std::string::npos) << not_json.err;
}

// Runs measured elsewhere (a GPU server) and saved with --save-run are fitted
// at home: the same fit, from the files, with the base device --set names.
TEST_F(CliTrain, CalibrateFitsSavedRuns) {
  for (const char* microbatches : {"2", "8"}) {
    const auto trained =
        run({"train", "--config", example("spiral_interleaved.json"), "--steps", "4", "--quiet",
             "--set", std::string("parallel.microbatches=") + microbatches, "--save-run",
             path(std::string("run-m") + microbatches + ".json")});
    ASSERT_EQ(trained.code, 0) << trained.err;
  }
  const auto result = run({"calibrate", "--run", path("run-m2.json"), "--run", path("run-m8.json"),
                           "--set", "simulation.profile=cpu-core", "--write", path("home.json")});
  ASSERT_EQ(result.code, 0) << result.err;
  const auto json = nlohmann::json::parse(result.out);
  EXPECT_EQ(json["runs_from"].size(), 2u);
  EXPECT_FALSE(json.contains("measured_steps"));
  EXPECT_GT(json["compute_samples"].get<int>(), 0);
  ASSERT_EQ(json["runs"].size(), 2u);
  EXPECT_EQ(json["runs"][0]["microbatches"], 2);
  EXPECT_EQ(json["runs"][1]["microbatches"], 8);
  EXPECT_EQ(json["base"]["device"], "cpu-core");
  ASSERT_EQ(json["written"].size(), 2u);

  const auto both = run(
      {"calibrate", "--config", example("spiral_interleaved.json"), "--run", path("run-m2.json")});
  EXPECT_EQ(both.code, 2);
  EXPECT_NE(both.err.find("not both"), std::string::npos) << both.err;
  const auto steps = run({"calibrate", "--run", path("run-m2.json"), "--steps", "3"});
  EXPECT_EQ(steps.code, 2);
  EXPECT_NE(steps.err.find("measured already"), std::string::npos) << steps.err;
  // A run the simulator made is no measurement.
  RunRecord simulated = load_run(path("run-m2.json"));
  simulated.trace.source = "simulated";
  save_run(simulated, path("simulated.json"));
  const auto refused = run({"calibrate", "--run", path("simulated.json")});
  EXPECT_NE(refused.code, 0);
  EXPECT_NE(refused.err.find("was simulated, not measured"), std::string::npos) << refused.err;
}

TEST_F(CliTrain, ProgressGoesToStderr) {
  const auto result = run({"train", "--config", example("spiral_interleaved.json"), "--steps", "2"});
  ASSERT_EQ(result.code, 0) << result.err;
  EXPECT_NE(result.err.find("step 2/2"), std::string::npos) << result.err;
}

TEST_F(CliTrain, MalformedDataFileIsAUserError) {
  std::ofstream(path("bad.csv")) << "label,a,b\n0,1,2\n1,x,3\n";
  std::ofstream(path("bad.json"))
      << R"({"model": {"input": [2], "layers": [{"type": "linear", "out": 2}]},
             "data": {"source": "csv", "path": "bad.csv", "classes": 2},
             "training": {"batch_size": 2, "steps": 1}})";
  const auto result = run({"train", "--config", path("bad.json")});
  EXPECT_EQ(result.code, 2);
  EXPECT_NE(result.err.find("bad.csv"), std::string::npos) << result.err;
  EXPECT_NE(result.err.find("'x' is not a number"), std::string::npos) << result.err;
  EXPECT_EQ(result.err.find("internal error"), std::string::npos) << result.err;
}

TEST_F(CliTrain, DivergenceStopsWithAUserError) {
  const auto result = run({"train", "--config", example("mnist_gpipe.json"), "--quiet", "--set",
                           "data.source=blobs", "--set", "data.features=784", "--set",
                           "data.classes=10", "--set", "training.optimizer.lr=100000", "--steps", "20"});
  ASSERT_EQ(result.code, 2) << result.out;
  EXPECT_NE(result.err.find("diverged"), std::string::npos) << result.err;
  EXPECT_NE(result.err.find("training.optimizer.lr"), std::string::npos) << result.err;
}

TEST_F(CliTrain, CudaWithoutAGpuIsAUserError) {
  const auto result = run({"train", "--config", example("spiral_interleaved.json"), "--backend", "cuda"});
  // In-process there is no CUDA backend registered; the real binary says "no CUDA device".
  EXPECT_EQ(result.code, 2);
  EXPECT_NE(result.err.find("backend.type = cpu"), std::string::npos) << result.err;
}

// bf16 on the CPU backend is predicted, not trained: the run says so before
// it loads anything, and simulate answers for the same file.
TEST_F(CliTrain, ModelsTheExecutorsCannotTrainAreUserErrors) {
  const auto transformer = run({"train", "--config", example("gpt2_small_predict.json"), "--backend", "cpu"});
  EXPECT_EQ(transformer.code, 2);
  EXPECT_NE(transformer.err.find("training.precision = bf16-mixed: the cpu executor trains in fp32 only"),
            std::string::npos)
      << transformer.err;
  // The cuda backend trains bf16-mixed: what stops this run there is the
  // GPU (none here), not the precision.
  const auto on_cuda = run({"train", "--config", example("gpt2_small_predict.json")});
  EXPECT_EQ(on_cuda.code, 2);
  EXPECT_EQ(on_cuda.err.find("trains in fp32 only"), std::string::npos) << on_cuda.err;
  EXPECT_NE(on_cuda.err.find("cuda"), std::string::npos) << on_cuda.err;
  EXPECT_EQ(run({"simulate", "--config", example("gpt2_small_predict.json")}).code, 0);
  const auto bf16 = run({"train", "--config", example("spiral_interleaved.json"), "--set",
                         "training.precision=bf16-mixed", "--steps", "1"});
  EXPECT_EQ(bf16.code, 2);
  EXPECT_NE(bf16.err.find("trains in fp32 only"), std::string::npos) << bf16.err;
}

// LLaMA's attention trains: grouped-query attention and rotary positions in
// the tiny example, at its tp 2 x pp 2, and the loss falls.
TEST_F(CliTrain, TinyLlamaTrainsWithGroupedQueryAttentionAndRotaryPositions) {
  const auto result = run({"train", "--config", example("tiny_llama_copy.json"), "--steps", "30",
                           "--set", "training.eval_every=0", "--quiet"});
  ASSERT_EQ(result.code, 0) << result.err;
  const nlohmann::json summary = nlohmann::json::parse(result.out);
  const auto& losses = summary.at("loss");
  ASSERT_EQ(losses.size(), 30u);
  EXPECT_LT(losses.back().get<double>(), 0.8 * losses.front().get<double>()) << result.out;
}

TEST_F(CliTrain, TeacherRegressionTrainsWithMse) {
  std::ofstream(path("regression.json"))
      << R"({"model": {"input": [8], "layers": [{"type": "linear", "out": 16}, {"type": "tanh"},
                                              {"type": "linear", "out": 1}], "loss": "mse"},
             "data": {"source": "teacher", "features": 8, "classes": 0, "samples": 512},
             "training": {"batch_size": 32, "steps": 30, "optimizer": {"type": "adam", "lr": 0.01}},
             "parallel": {"pp": 2, "microbatches": 2}})";
  const auto result = run({"train", "--config", path("regression.json"), "--quiet"});
  ASSERT_EQ(result.code, 0) << result.err;
  const auto json = nlohmann::json::parse(result.out);
  const auto& loss = json["loss"];
  ASSERT_EQ(loss.size(), 30u);
  EXPECT_LT(loss.back().get<double>(), loss.front().get<double>());
  EXPECT_TRUE(json["val_accuracy"].is_null());  // no classes, no accuracy

  const auto wrong_loss = run({"train", "--config", path("regression.json"), "--set",
                               "model.loss=cross_entropy"});
  EXPECT_EQ(wrong_loss.code, 2);
  EXPECT_NE(wrong_loss.err.find("needs model.loss = mse"), std::string::npos) << wrong_loss.err;
}

TEST_F(CliTrain, NeedsAConfig) {
  const auto result = run({"train"});
  EXPECT_EQ(result.code, 2);
  EXPECT_NE(result.err.find("--config"), std::string::npos);
}

// Options of runs over processes, used without mpirun or without their
// partner, are one-line mistakes; --serve works for a run in one process too.
TEST_F(CliTrain, ProcessAndLiveViewOptionsAreCheckedAndServeWorksAlone) {
  for (const char* option : {"--devices-per-rank", "--rank-timeout"}) {
    const auto result = run({"train", "--config", example("spiral_interleaved.json"), option, "2"});
    EXPECT_EQ(result.code, 2);
    EXPECT_NE(result.err.find("mpirun -np N"), std::string::npos) << result.err;
  }
  const auto lone_allow =
      run({"train", "--config", example("spiral_interleaved.json"), "--serve-allow", "127.0.0.1"});
  EXPECT_EQ(lone_allow.code, 2);
  EXPECT_NE(lone_allow.err.find("--serve PORT"), std::string::npos) << lone_allow.err;
  const auto bad_allow = run(
      {"train", "--config", example("spiral_interleaved.json"), "--serve", "0", "--serve-allow", "my-laptop"});
  EXPECT_EQ(bad_allow.code, 2);
  EXPECT_NE(bad_allow.err.find("not an IPv4 address"), std::string::npos) << bad_allow.err;

  const auto served = run({"train", "--config", example("spiral_interleaved.json"), "--steps", "2", "--serve", "0"});
  EXPECT_EQ(served.code, 0) << served.err;
  EXPECT_NE(served.err.find("live view on port "), std::string::npos) << served.err;
}

}  // namespace
}  // namespace pipelab
