// ZeRO's model states (zero_sharding.h) against the paper's formulas, its
// collectives in the lowered schedule and the simulator, and its price in
// bytes sent per step (communication_volume.h).
#include "core/sim/zero_sharding.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>

#include "core/io/experiment_io.h"
#include "core/schedule/lowering.h"
#include "core/sim/communication_volume.h"
#include "core/sim/experiment_prediction.h"

namespace pipelab {
namespace {

// A stage of mixed-precision Adam: 2-byte weights and gradients, a 4-byte
// master copy and two 4-byte slots.
StageProfile adam_stage(int64_t params) {
  StageProfile stage;
  stage.params = params;
  stage.largest_layer_params = params / 10;
  stage.precision = precision_bytes(Precision::Bf16Mixed);
  return stage;
}

int64_t model_states(const ShardedModelStates& states) {
  return states.weights + states.gradients + states.optimizer_state;
}

// Rajbhandari et al., "ZeRO: Memory Optimizations Toward Training Trillion
// Parameter Models" (SC 2020), Figure 1: a 7.5B-parameter model over N = 64
// data-parallel devices holds 120 GB, 31.4 GB, 16.6 GB and 1.9 GB of model
// states per device under no ZeRO and stages 1, 2 and 3.
TEST(ZeroSharding, TheZeroPapersFigureOne) {
  const StageProfile stage = adam_stage(7'500'000'000);
  const double gb = 1e9;
  EXPECT_NEAR(model_states(sharded_model_states(stage, 0, 64, 1, 2)) / gb, 120.0, 0.05);
  EXPECT_NEAR(model_states(sharded_model_states(stage, 1, 64, 1, 2)) / gb, 31.4, 0.05);
  EXPECT_NEAR(model_states(sharded_model_states(stage, 2, 64, 1, 2)) / gb, 16.6, 0.05);
  EXPECT_NEAR(model_states(sharded_model_states(stage, 3, 64, 1, 2)) / gb, 1.9, 0.05);
}

// Per parameter: 16, 4 + 12 / N, 2 + 14 / N and 16 / N bytes, by category.
TEST(ZeroSharding, EachStageShardsItsCategoriesOverTheGroup) {
  const int64_t params = 8'000'000;
  const StageProfile stage = adam_stage(params);
  for (int n : {2, 4, 8}) {
    SCOPED_TRACE("N = " + std::to_string(n));
    const ShardedModelStates none = sharded_model_states(stage, 0, n, 1, 2);
    EXPECT_EQ(none.weights, 2 * params);
    EXPECT_EQ(none.gradients, 2 * params);
    EXPECT_EQ(none.optimizer_state, 12 * params);
    EXPECT_EQ(none.collective_buffers, 0);
    const ShardedModelStates one = sharded_model_states(stage, 1, n, 1, 2);
    EXPECT_EQ(model_states(one), 4 * params + 12 * params / n);
    EXPECT_EQ(one.optimizer_state, 12 * params / n);
    const ShardedModelStates two = sharded_model_states(stage, 2, n, 1, 2);
    EXPECT_EQ(model_states(two), 2 * params + 14 * params / n);
    EXPECT_EQ(two.gradients, 2 * params / n);
    const ShardedModelStates three = sharded_model_states(stage, 3, n, 1, 2);
    EXPECT_EQ(model_states(three), 16 * params / n);
  }
}

// With fp32 gradients (Megatron-LM's default for bf16): 18 bytes per
// parameter, 6 + 12 / N, 2 + 16 / N and 18 / N.
TEST(ZeroSharding, Fp32GradientsMakeEighteenBytesAParameter) {
  const int64_t params = 8'000'000;
  StageProfile stage = adam_stage(params);
  stage.precision = precision_bytes(Precision::Bf16Mixed, /*fp32_gradients=*/true);
  for (int n : {2, 4, 8}) {
    SCOPED_TRACE("N = " + std::to_string(n));
    EXPECT_EQ(model_states(sharded_model_states(stage, 0, n, 1, 2)), 18 * params);
    EXPECT_EQ(model_states(sharded_model_states(stage, 1, n, 1, 2)), 6 * params + 12 * params / n);
    EXPECT_EQ(model_states(sharded_model_states(stage, 2, n, 1, 2)), 2 * params + 16 * params / n);
    EXPECT_EQ(model_states(sharded_model_states(stage, 3, n, 1, 2)), 18 * params / n);
  }
  // Under fp32 the gradients are float32 already.
  EXPECT_EQ(precision_bytes(Precision::Fp32, true).gradient,
            precision_bytes(Precision::Fp32).gradient);
}

// An experiment's switch reaches the profiles, and the data-parallel
// reduction moves the float32 gradients: twice the bytes per step.
TEST(ZeroSharding, Fp32GradientsDoubleWhatDataParallelismSends) {
  Experiment experiment = parse_experiment(R"({
    "model": {"input": [64],
              "layers": [{"type": "embedding", "vocab": 128, "dim": 64},
                         {"type": "transformer_block", "heads": 4, "repeat": 2},
                         {"type": "linear", "out": 128, "bias": false}],
              "loss": "cross_entropy"},
    "data": {"source": "copy", "samples": 64, "vocab": 128},
    "training": {"batch_size": 16, "precision": "bf16-mixed"},
    "parallel": {"dp": 4, "microbatches": 2},
    "simulation": {"profile": "h100"}})");
  const auto sent = [](const Experiment& e) {
    const Prediction prediction = predict_experiment(e);
    return communication_per_step(prediction.schedule, 0).data_parallel;
  };
  const int64_t bf16 = sent(experiment);
  const int64_t gradients_bf16 = predict_experiment(experiment).profiles[0].gradient_bytes();
  experiment.training.fp32_gradients = true;
  EXPECT_EQ(sent(experiment), 2 * bf16);
  EXPECT_EQ(predict_experiment(experiment).profiles[0].gradient_bytes(), 2 * gradients_bf16);
  const Experiment again = parse_experiment(experiment_to_json(experiment));
  EXPECT_TRUE(again.training.fp32_gradients);
}

TEST(ZeroSharding, TheBucketAndTheGatheredUnitsAreCollectiveBuffers) {
  const StageProfile stage = adam_stage(8'000'000);  // 16 MB of gradients, units of 0.8 M params
  EXPECT_EQ(sharded_model_states(stage, 1, 4, 1, 2).collective_buffers, 0);
  EXPECT_EQ(sharded_model_states(stage, 2, 4, 1, 2).collective_buffers, 16'000'000);  // the bucket: all of them
  EXPECT_EQ(sharded_model_states(stage, 3, 4, 1, 2).collective_buffers, 16'000'000 + 2 * 1'600'000);
  const StageProfile large = adam_stage(1'000'000'000);  // 2 GB of gradients: one 160 MB bucket
  EXPECT_EQ(sharded_model_states(large, 2, 4, 1, 2).collective_buffers, 160'000'000);
  // One replica shards nothing.
  EXPECT_EQ(model_states(sharded_model_states(stage, 3, 1, 1, 2)), 16 * 8'000'000);
}

TEST(ZeroSharding, ExpertsAreShardedOnlyOverTheReplicasThatHoldThem) {
  StageProfile stage = adam_stage(8'000'000);
  stage.expert_params = 4'000'000;  // this member's experts
  // dp 8, ep 4: the dense half over 8, the experts over the 2 replicas holding the same ones.
  EXPECT_EQ(sharded_model_states(stage, 1, 8, 4, 2).optimizer_state, 12 * 4'000'000 / 8 + 12 * 4'000'000 / 2);
}

Experiment llama_on_eight(int zero, int microbatches = 1) {
  Experiment experiment = load_experiment(std::string(PIPELAB_SOURCE_DIR) + "/examples/llama_7b_predict.json");
  experiment.parallel.tp = 1;
  experiment.parallel.sequence_parallel = false;
  experiment.parallel.dp = 8;
  experiment.parallel.microbatches = microbatches;
  experiment.training.batch_size = 8 * microbatches;
  experiment.parallel.zero = zero;
  // Four of the 32 blocks: the same arithmetic, faster.
  experiment.model.layers.erase(experiment.model.layers.begin() + 5, experiment.model.layers.begin() + 33);
  return experiment;
}

const SimulationOptions kMetricsOnly{false, false};

TEST(ZeroSharding, PredictedPeaksByCategoryAreTheFormulas) {
  for (int zero = 0; zero <= 3; ++zero) {
    SCOPED_TRACE("zero " + std::to_string(zero));
    const Prediction prediction = predict_experiment(llama_on_eight(zero), std::nullopt, 0, kMetricsOnly);
    const StageProfile& stage = prediction.profiles.at(0);
    const ShardedModelStates expected = sharded_model_states(stage, zero, 8, 1, 2);
    for (const DeviceSimStats& device : prediction.result.per_device) {
      EXPECT_EQ(device.peak_bytes[static_cast<int>(MemoryCategory::Weights)], expected.weights);
      EXPECT_EQ(device.peak_bytes[static_cast<int>(MemoryCategory::Gradients)], expected.gradients);
      EXPECT_EQ(device.peak_bytes[static_cast<int>(MemoryCategory::OptimizerState)], expected.optimizer_state);
      EXPECT_GE(device.peak_bytes[static_cast<int>(MemoryCategory::CommBuffers)], expected.collective_buffers);
    }
  }
}

std::map<OpKind, int> data_parallel_ops(const Schedule& schedule, int device) {
  std::map<OpKind, int> count;
  for (const Op& op : schedule.devices[device])
    if (op.group == CommGroup::DataParallel) ++count[op.kind];
  return count;
}

TEST(ZeroSharding, LoweringPlacesEachStagesCollectives) {
  ParallelPlan plan;
  plan.dp = 2;
  plan.microbatches = 3;
  const int steps = 1;
  plan.zero = 0;
  EXPECT_EQ(data_parallel_ops(build_schedule(plan, {}, steps), 0), (std::map<OpKind, int>{{OpKind::AllReduce, 1}}));
  plan.zero = 1;  // reduce-scatter, update the shard, gather the weights
  const Schedule one = build_schedule(plan, {}, steps);
  EXPECT_EQ(data_parallel_ops(one, 0),
            (std::map<OpKind, int>{{OpKind::ReduceScatter, 1}, {OpKind::AllGather, 1}}));
  const std::vector<Op>& ops = one.devices[0];
  ASSERT_GE(ops.size(), 3u);
  EXPECT_EQ(ops[ops.size() - 3].kind, OpKind::ReduceScatter);
  EXPECT_EQ(ops[ops.size() - 2].kind, OpKind::Update);
  EXPECT_EQ(ops[ops.size() - 1].kind, OpKind::AllGather);
  plan.zero = 2;  // one reduce-scatter per micro-batch
  EXPECT_EQ(data_parallel_ops(build_schedule(plan, {}, steps), 0),
            (std::map<OpKind, int>{{OpKind::ReduceScatter, 3}, {OpKind::AllGather, 1}}));
  plan.zero = 3;  // and a gather for every F and B, none after U
  const Schedule three = build_schedule(plan, {}, steps);
  EXPECT_EQ(data_parallel_ops(three, 0),
            (std::map<OpKind, int>{{OpKind::ReduceScatter, 3}, {OpKind::AllGather, 6}}));
  // The gathers run one compute op ahead: F0's and F1's before F0.
  EXPECT_EQ(three.devices[0][0].kind, OpKind::AllGather);
  EXPECT_EQ(three.devices[0][1].kind, OpKind::AllGather);
  EXPECT_EQ(three.devices[0][2].kind, OpKind::Forward);
  EXPECT_EQ(three.devices[0][3].kind, OpKind::AllGather);
}

// FSDP's reshard_after_forward = false: the weights gathered for a forward
// stay until the micro-batches holding them have run their backward, so
// only an F that finds none in flight gathers: one per micro-batch under
// 1F1B (F B F B ...), one per step under GPipe (F F F B B B).
TEST(ZeroSharding, WithoutReshardingOnlyAFirstForwardGathers) {
  ParallelPlan plan;
  plan.dp = 2;
  plan.microbatches = 3;
  plan.zero = 3;
  plan.reshard_after_forward = false;
  const Schedule interleaved = build_schedule(plan, {}, 1);
  EXPECT_EQ(data_parallel_ops(interleaved, 0),
            (std::map<OpKind, int>{{OpKind::ReduceScatter, 3}, {OpKind::AllGather, 3}}));
  for (const Op& op : interleaved.devices[0])
    if (op.kind == OpKind::AllGather) {
      EXPECT_EQ(op.group, CommGroup::DataParallel);
    }
  plan.schedule = ScheduleKind::GPipe;
  EXPECT_EQ(data_parallel_ops(build_schedule(plan, {}, 1), 0),
            (std::map<OpKind, int>{{OpKind::ReduceScatter, 3}, {OpKind::AllGather, 1}}));
  // Only zero 3 gathers weights for use; elsewhere the switch is refused.
  plan.zero = 2;
  try {
    build_schedule(plan, {}, 1);
    FAIL() << "reshard_after_forward = false at zero 2 was accepted";
  } catch (const std::invalid_argument& error) {
    EXPECT_NE(std::string(error.what()).find("set zero = 3"), std::string::npos) << error.what();
  }
}

// It sends what ZeRO-2 sends with one micro-batch (each weight gathered
// once), and holds the stage's whole weights as gathered buffers meanwhile.
TEST(ZeroSharding, WithoutReshardingZeroThreeSendsWhatZeroTwoSends) {
  Experiment kept = llama_on_eight(3);
  kept.parallel.reshard_after_forward = false;
  const Prediction prediction = predict_experiment(kept, std::nullopt, 0, kMetricsOnly);
  const Prediction two = predict_experiment(llama_on_eight(2), std::nullopt, 0, kMetricsOnly);
  EXPECT_NEAR(communication_per_step(prediction.schedule, 0).data_parallel /
                  communication_per_step(two.schedule, 0).data_parallel,
              1.0, 1e-9);
  const StageProfile& stage = prediction.profiles.at(0);
  EXPECT_EQ(sharded_model_states(stage, 3, 8, 1, 2, false).collective_buffers,
            std::min(stage.gradient_bytes(), static_cast<int64_t>(kGradientBucketBytes)) +
                stage.weight_bytes());
  EXPECT_GE(
      prediction.result.per_device[0].peak_bytes[static_cast<int>(MemoryCategory::CommBuffers)],
      stage.weight_bytes());
}

TEST(ZeroSharding, ZeroThreeSendsHalfAsMuchAgainAsPlainDataParallelism) {
  auto sent = [](int zero) {
    const Prediction prediction = predict_experiment(llama_on_eight(zero), std::nullopt, 0, kMetricsOnly);
    return communication_per_step(prediction.schedule, 0).data_parallel;
  };
  const double plain = sent(0);
  ASSERT_GT(plain, 0);
  // An all-reduce is a reduce-scatter and an all-gather: the same bytes.
  EXPECT_NEAR(sent(1) / plain, 1.0, 1e-9);
  EXPECT_NEAR(sent(2) / plain, 1.0, 1e-9);
  EXPECT_NEAR(sent(3) / plain, 1.5, 1e-9);
}

TEST(ZeroSharding, ZeroTwoScattersEveryMicrobatch) {
  const Prediction one = predict_experiment(llama_on_eight(1, 4), std::nullopt, 0, kMetricsOnly);
  const Prediction two = predict_experiment(llama_on_eight(2, 4), std::nullopt, 0, kMetricsOnly);
  const double gradients = static_cast<double>(one.profiles[0].gradient_bytes()) * 7 / 8;
  EXPECT_NEAR(communication_per_step(two.schedule, 0).data_parallel -
                  communication_per_step(one.schedule, 0).data_parallel,
              3 * gradients, 1e-6 * gradients);
}

TEST(ZeroSharding, PrefetchedGathersHideUnderTheComputeBeforeThem) {
  Experiment experiment = llama_on_eight(3, 4);
  experiment.simulation.overlap_grad_reduce = false;
  const Prediction blocking = predict_experiment(experiment);
  experiment.simulation.overlap_grad_reduce = true;
  const Prediction overlapped = predict_experiment(experiment);
  EXPECT_LT(overlapped.result.makespan, blocking.result.makespan);
  // Every F and B starts no earlier than the end of the gather that brings its weights.
  std::vector<double> gather_ends;
  std::vector<double> reader_begins;
  for (const TraceEvent& event : overlapped.result.trace.events) {
    if (event.device != 0) continue;
    if (event.op.kind == OpKind::AllGather) gather_ends.push_back(event.t_end);
    if (event.op.kind == OpKind::Forward || event.op.kind == OpKind::Backward) reader_begins.push_back(event.t_begin);
  }
  ASSERT_EQ(gather_ends.size(), reader_begins.size());
  std::sort(gather_ends.begin(), gather_ends.end());
  std::sort(reader_begins.begin(), reader_begins.end());
  for (size_t i = 0; i < gather_ends.size(); ++i) EXPECT_LE(gather_ends[i], reader_begins[i] + 1e-12);
}

}  // namespace
}  // namespace pipelab
