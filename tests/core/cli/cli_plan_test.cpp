#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <regex>

#include "cli_test_support.h"
#include "core/io/experiment_io.h"
#include "core/sim/experiment_prediction.h"

namespace pipelab {
namespace {

namespace fs = std::filesystem;
using test::example;
using test::run;

// A file name for this test in the temporary folder, removed at the end.
struct TemporaryFile {
  explicit TemporaryFile(const std::string& name)
      : path((fs::temp_directory_path() / ("pipelab_plan_" + name)).string()) {}
  ~TemporaryFile() {
    std::error_code ignored;
    fs::remove(path, ignored);
  }
  std::string path;
};

TEST(CliPlan, JsonParsesAndTheWrittenPlanRoundTrips) {
  for (const std::string planner : {"dapple", "pipedream"}) {
    TemporaryFile written("round_trip_" + planner + ".json");
    const auto result = run({"plan", "--config", example("mnist_mlp_1f1b.json"), "--devices", "8",
                             "--memory-per-device", "1GiB", "--planner", planner, "--json",
                             "--write", written.path});
    ASSERT_EQ(result.code, 0) << result.err;
    const auto json = nlohmann::json::parse(result.out);
    EXPECT_EQ(json["planner"], planner);
    const auto& plan = json["plan"];
    EXPECT_LE(plan["dp"].get<int>() * plan["tp"].get<int>() * plan["pp"].get<int>(), 8);
    EXPECT_EQ(json["peak_bytes_per_stage"].size(), plan["pp"].get<size_t>());
    for (const auto& bytes : json["peak_bytes_per_stage"])
      EXPECT_LE(bytes.get<int64_t>(), int64_t{1} << 30);
    // The optimum's stages cover every layer once, in order.
    int next_layer = 0;
    for (const auto& stage : json["optimum"]["stages"]) {
      EXPECT_EQ(stage["first_layer"].get<int>(), next_layer);
      next_layer = stage["last_layer"].get<int>() + 1;
    }
    EXPECT_EQ(next_layer, 5);

    const Experiment loaded = load_experiment(written.path);  // validates
    EXPECT_EQ(loaded.parallel.dp, plan["dp"].get<int>());
    EXPECT_EQ(loaded.parallel.pp, plan["pp"].get<int>());
    EXPECT_EQ(loaded.parallel.microbatches, plan["microbatches"].get<int>());
    EXPECT_EQ(schedule_name(loaded.parallel.schedule), plan["schedule"].get<std::string>());
    EXPECT_EQ(loaded.data.resolved_path,
              load_experiment(example("mnist_mlp_1f1b.json")).data.resolved_path);
    const Prediction prediction = predict_experiment(loaded);
    EXPECT_DOUBLE_EQ(prediction.result.makespan / prediction.schedule.steps,
                     json["predicted_step_s"].get<double>());
  }
}

TEST(CliPlan, TheWrittenPipeDreamPlanSaysWhatTheUniformSplitCosts) {
  // On 8 devices the optimum replicates its two stages 5 and 3 times; PipeLab runs 4 and 4.
  const auto result = run({"plan", "--config", example("mnist_mlp_1f1b.json"), "--devices", "8",
                           "--memory-per-device", "1GiB", "--planner", "pipedream", "--json"});
  ASSERT_EQ(result.code, 0) << result.err;
  const auto json = nlohmann::json::parse(result.out);
  // The case was chosen for its uneven optimum; if the planner's costs change so
  // that it becomes uniform, choose another case rather than test nothing.
  ASSERT_FALSE(json["optimum"]["uniform"].get<bool>()) << json["optimum"];
  EXPECT_NE(json["note"].get<std::string>().find("uniform dp x pp"), std::string::npos)
      << json["note"];
  EXPECT_NE(json["note"].get<std::string>().find("more than the optimum"), std::string::npos)
      << json["note"];
}

TEST(CliPlan, EveryExamplePlansIntoAValidExperimentThatSimulates) {
  int planned = 0;
  for (const auto& entry : fs::directory_iterator(std::string(PIPELAB_SOURCE_DIR) + "/examples")) {
    if (!entry.is_regular_file() || entry.path().extension() != ".json") continue;
    const Experiment original = load_experiment(entry.path().string());
    const std::string devices = std::to_string(4 * original.parallel.tp);
    for (const std::string planner : {"dapple", "pipedream"}) {
      TemporaryFile written(entry.path().filename().string());
      const auto result =
          run({"plan", "--config", entry.path().string(), "--devices", devices,
               "--memory-per-device", "1TiB", "--planner", planner, "--write", written.path});
      if (original.simulation.profile == "unit") {
        EXPECT_EQ(result.code, 2);
        EXPECT_NE(result.err.find("simulation.profile"), std::string::npos) << result.err;
        continue;
      }
      ASSERT_EQ(result.code, 0) << entry.path() << " " << planner << ": " << result.err;
      const Experiment loaded = load_experiment(written.path);
      EXPECT_LE(loaded.parallel.devices(), 4 * original.parallel.tp);
      EXPECT_GT(predict_experiment(loaded).result.makespan, 0) << entry.path();
      ++planned;
    }
  }
  EXPECT_GE(planned, 2 * 14);
}

TEST(CliPlan, MemoryTooSmallNamesTheSmallestThatWorks) {
  for (const std::string planner : {"dapple", "pipedream"}) {
    const auto result = run({"plan", "--config", example("mnist_mlp_1f1b.json"), "--devices", "4",
                             "--memory-per-device", "1KiB", "--planner", planner});
    ASSERT_EQ(result.code, 2) << result.out;
    std::smatch bytes;
    ASSERT_TRUE(std::regex_search(result.err, bytes, std::regex(R"(\((\d+) bytes\))")))
        << result.err;
    const auto enough = run({"plan", "--config", example("mnist_mlp_1f1b.json"), "--devices", "4",
                             "--memory-per-device", bytes[1].str(), "--planner", planner});
    EXPECT_EQ(enough.code, 0) << enough.err;
    const auto one_less =
        run({"plan", "--config", example("mnist_mlp_1f1b.json"), "--devices", "4",
             "--memory-per-device", std::to_string(std::stoll(bytes[1].str()) - 1), "--planner",
             planner});
    EXPECT_EQ(one_less.code, 2);
  }
}

TEST(CliPlan, MistakesGetOneLineSayingWhatToFix) {
  const std::string config = example("mnist_mlp_1f1b.json");
  const std::string gpt = example("gpt2_small_predict.json");
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"plan", "--devices", "4"}, "--config"},
      {{"plan", "--config", config}, "--devices"},
      {{"plan", "--config", config, "--devices", "0"}, "--devices"},
      {{"plan", "--config", config, "--devices", "four"}, "--devices"},
      {{"plan", "--config", config, "--devices", "4", "--memory-per-device", "lots"}, "16GiB"},
      {{"plan", "--config", config, "--devices", "4", "--memory-per-device", "0"}, "above 0"},
      {{"plan", "--config", config, "--devices", "4", "--bandwidth", "fast"}, "450GB"},
      {{"plan", "--config", config, "--devices", "4", "--planner", "megatron"},
       "dapple, pipedream"},
      {{"plan", "--config", config, "--devices", "6", "--set", "parallel.tp=4", "--set",
        "model.layers.0.out=512"},
       "multiple of parallel.tp"},
      {{"plan", "--config", example("pipedream_async.json"), "--devices", "4",
        "--memory-per-device", "1GiB"},
       "simulation.profile"},
      {{"plan", "--config", config, "--devices", "4", "--top", "3"}, "--planner search"},
      {{"plan", "--config", gpt, "--planner", "search"}, "simulation.cluster.nodes"},
      {{"plan", "--config", gpt, "--planner", "search", "--devices", "4", "--margin", "1.5"},
       "below 1"},
      {{"plan", "--config", gpt, "--planner", "search", "--devices", "4", "--export", "deepspeed"},
       "megatron, torchtitan"},
      {{"plan", "--config", config, "--planner", "search", "--devices", "4", "--export",
        "megatron"},
       "only a sequence model"},
      {{"plan", "--config", gpt, "--planner", "search", "--devices", "4", "--memory-per-device",
        "1MB", "--write", "never.json"},
       "nothing to write"},
  };
  for (const auto& [args, expected] : cases) {
    const auto result = run(args);
    EXPECT_EQ(result.code, 2) << args[args.size() - 1];
    EXPECT_NE(result.err.find(expected), std::string::npos) << result.err;
    EXPECT_EQ(std::count(result.err.begin(), result.err.end(), '\n'), 1) << result.err;
  }
}

TEST(CliPlan, SearchRanksPlansThatFitWritesTheBestAndExportsIt) {
  TemporaryFile written("search.json");
  const auto result = run({"plan", "--config", example("gpt2_small_predict.json"), "--planner",
                           "search", "--devices", "8", "--top", "3", "--json", "--write",
                           written.path, "--export", "megatron"});
  ASSERT_EQ(result.code, 0) << result.err;
  const auto json = nlohmann::json::parse(result.out);
  EXPECT_EQ(json["planner"], "search");
  ASSERT_FALSE(json["plans"].empty());
  EXPECT_LE(json["plans"].size(), 3u);
  int64_t pruned = 0;
  for (const auto& [reason, count] : json["pruned_counts"].items()) pruned += count.get<int64_t>();
  EXPECT_EQ(pruned, static_cast<int64_t>(json["pruned"].size()));
  EXPECT_EQ(pruned + static_cast<int64_t>(json["plans"].size()), json["candidates"].get<int64_t>());
  for (const auto& entry : json["pruned"]) EXPECT_FALSE(entry["why"].get<std::string>().empty());
  for (const auto& plan : json["plans"])
    EXPECT_LE(plan["peak_bytes"].get<int64_t>(), json["usable_bytes"].get<int64_t>());

  const auto& best = json["plans"][0];
  const Experiment loaded = load_experiment(written.path);  // validates
  EXPECT_EQ(loaded.parallel.tp, best["split"]["tp"].get<int>());
  EXPECT_EQ(loaded.parallel.pp, best["split"]["pp"].get<int>());
  EXPECT_EQ(loaded.parallel.devices(), 8);
  const Prediction prediction = predict_experiment(loaded);
  EXPECT_DOUBLE_EQ(prediction.result.makespan / prediction.schedule.steps,
                   best["step_s"].get<double>());
  EXPECT_EQ(json["export"]["tool"], "megatron");
  const std::string tp_flag =
      "--tensor-model-parallel-size " + std::to_string(best["split"]["tp"].get<int>());
  EXPECT_NE(json["export"]["lines"].dump().find(tp_flag), std::string::npos);

  const auto text = run({"plan", "--config", example("gpt2_small_predict.json"), "--planner",
                         "search", "--devices", "8", "--export", "torchtitan"});
  ASSERT_EQ(text.code, 0) << text.err;
  EXPECT_NE(text.out.find("candidates: "), std::string::npos);
  EXPECT_NE(text.out.find("pruned, the first of each reason:"), std::string::npos);
  EXPECT_NE(text.out.find("[parallelism]"), std::string::npos);
}

TEST(CliPlan, HelpNamesTheCommandAndTheDefaultPlanner) {
  const auto result = run({"--help"});
  EXPECT_NE(result.out.find("pipelab-cli plan"), std::string::npos);
  EXPECT_NE(result.out.find("--planner dapple (default)"), std::string::npos);
  EXPECT_NE(result.out.find("--planner search"), std::string::npos);
}

}  // namespace
}  // namespace pipelab
