// Simulating replica 0 alone (SimulationOptions::first_replica_only, what the
// split search does for speed) gives the whole run's step and peaks: the
// replicas of a synchronous run are alike. Checked on real experiments across
// ZeRO stages, schedules, experts, context parallelism and nodes.
#include <gtest/gtest.h>

#include <algorithm>

#include "core/io/experiment_io.h"
#include "core/sim/experiment_prediction.h"

namespace pipelab {
namespace {

Experiment small_gpt(const std::string& parallel, const std::string& block_extra = "") {
  return parse_experiment(R"({
    "model": {"input": [256],
              "layers": [{"type": "embedding", "vocab": 512, "dim": 128},
                         {"type": "transformer_block", "heads": 4, "repeat": 4)" +
                          block_extra + R"(},
                         {"type": "layernorm"}, {"type": "linear", "out": 512, "bias": false}],
              "loss": "cross_entropy"},
    "data": {"source": "copy", "samples": 256, "vocab": 512},
    "training": {"batch_size": 32, "precision": "bf16-mixed", "optimizer": {"type": "adamw", "lr": 1e-3}},
    "parallel": )" + parallel +
                          R"(,
    "simulation": {"profile": "h100"}})");
}

TEST(FirstReplicaOnly, GivesTheWholeRunsStepAndPeaks) {
  const std::vector<Experiment> experiments = {
      small_gpt(R"({"dp": 4, "pp": 2, "microbatches": 4, "schedule": "1f1b"})"),
      small_gpt(
          R"({"dp": 4, "pp": 2, "microbatches": 4, "schedule": "interleaved-1f1b", "chunks": 2, "zero": 1})"),
      small_gpt(R"({"dp": 8, "microbatches": 2, "zero": 3})"),
      small_gpt(R"({"dp": 4, "tp": 2, "microbatches": 2, "zero": 2, "sequence_parallel": true})"),
      small_gpt(
          R"({"dp": 2, "cp": 2, "pp": 2, "microbatches": 4, "schedule": "zb-v", "chunks": 2})"),
      small_gpt(R"({"dp": 4, "ep": 4, "microbatches": 2})", R"(, "experts": 4, "top_k": 1)"),
      // 16 devices on 8-device nodes: the pipeline's messages cross the network.
      small_gpt(R"({"dp": 8, "pp": 2, "microbatches": 4, "schedule": "dualpipev", "chunks": 2})"),
  };
  for (const Experiment& experiment : experiments) {
    SCOPED_TRACE(experiment_to_json(experiment));
    ASSERT_TRUE(validate_experiment(experiment).empty());
    SimulationOptions whole;
    whole.record_events = whole.record_memory = false;
    SimulationOptions one = whole;
    one.first_replica_only = true;
    const Prediction all = predict_experiment(experiment, std::nullopt, 0, whole);
    const Prediction first = predict_experiment(experiment, std::nullopt, 0, one);
    EXPECT_DOUBLE_EQ(first.result.makespan, all.result.makespan);
    EXPECT_DOUBLE_EQ(first.result.microbatches_per_time, all.result.microbatches_per_time);
    const int replica = experiment.parallel.tp * experiment.parallel.cp * experiment.parallel.pp;
    ASSERT_EQ(static_cast<int>(first.result.per_device.size()), replica);
    for (int d = 0; d < replica; ++d) {
      EXPECT_EQ(first.result.per_device[d].peak_total_bytes,
                all.result.per_device[d].peak_total_bytes);
      EXPECT_DOUBLE_EQ(first.result.per_device[d].busy, all.result.per_device[d].busy);
    }
    const auto peak = [](const SimulationResult& result) {
      int64_t most = 0;
      for (const DeviceSimStats& device : result.per_device)
        most = std::max(most, device.peak_total_bytes);
      return most;
    };
    EXPECT_EQ(peak(first.result), peak(all.result));
    // The lowered schedule holds replica 0's programs alone.
    EXPECT_TRUE(first.schedule.devices.back().empty() || experiment.parallel.dp == 1);
  }
}

TEST(FirstReplicaOnly, AScheduleOfOneReplicaIsNotSimulatedAsAWholeRun) {
  const Experiment experiment = small_gpt(R"({"dp": 2, "microbatches": 2})");
  SimulationOptions one;
  one.first_replica_only = true;
  const Prediction first = predict_experiment(experiment, std::nullopt, 0, one);
  EXPECT_THROW(simulate(first.schedule, first.cost), std::invalid_argument);
}

}  // namespace
}  // namespace pipelab
