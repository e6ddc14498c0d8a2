// ZeRO 1, 2 and 3 (device_worker.h) train as plain data parallelism does, on
// every backend: the replicas share out the optimizer state (zero 2: and the
// gradients; zero 3: and the weights, gathered layer by layer for each use)
// and the loss curve stays the one device's, within 1e-5 in FP32 (the sums
// are the same; zero 2 and 3 add each micro-batch's gradients after the
// replicas' sum instead of before it, a reassociation). And each device holds
// what ZeRO says: its slice of the optimizer state, (zero 2) of the gradients
// between backwards and (zero 3) of the weights between uses. With tensor,
// sequence and expert parallelism, and with the optimizer offloaded.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "conformance_support.h"

namespace pipelab {
namespace {

using testing::run_experiment;
using testing::with_plan;

constexpr double kZeroTolerance = 1e-5;

// AdamW: two state slots per parameter, which ZeRO shards.
Experiment with_adam(Experiment experiment) {
  experiment.training.optimizer.type = "adamw";
  experiment.training.optimizer.lr = 0.01;
  experiment.training.optimizer.weight_decay = 0.01;
  return experiment;
}

Experiment sharded(Experiment experiment, int zero) {
  experiment.parallel.zero = zero;
  return experiment;
}

// The most device `device` holds of a category once training runs (from its
// first op: building the layers allocates whole gradients, which zero 2
// releases before the first op).
int64_t peak(const Trace& trace, int device, MemoryCategory which) {
  double first_op = 1e300;
  for (const TraceEvent& event : trace.events)
    if (event.device == device) first_op = std::min(first_op, event.t_begin);
  int64_t most = 0;
  for (const MemorySample& sample : trace.memory)
    if (sample.device == device && sample.t >= first_op)
      most = std::max(most, sample.bytes[static_cast<int>(which)]);
  return most;
}

class ZeroEquivalence : public testing::BackendConformance {
 protected:
  // `plan` at every stage it allows (zero 2 and 3 need pp 1) trains to
  // `reference` within kZeroTolerance.
  void check(const std::vector<double>& reference, const Experiment& plan, const std::string& what) {
    for (int zero = 1; zero <= (plan.parallel.pp == 1 ? 3 : 1); ++zero) {
      const std::string name = what + " zero " + std::to_string(zero);
      const testing::RunOutput run = run_experiment(sharded(plan, zero));
      ASSERT_EQ(run.state, RunState::Finished) << name << ": " << run.error;
      testing::expect_same_curve(reference, run.losses(), kZeroTolerance, name);
    }
  }
};
PIPELAB_CONFORMANCE_SUITE(ZeroEquivalence);

TEST_P(ZeroEquivalence, DataParallelTrainsAsOneDevice) {
  const Experiment one = with_adam(testing::small_experiment());
  const std::vector<double> reference = testing::losses_of(testing::on_backend(one, "cpu"), "one device");
  check(reference, with_plan(one, ScheduleKind::OneFOneB, 1, 2, 4), "dp4 m2");
  check(reference, with_plan(one, ScheduleKind::OneFOneB, 1, 1, 2), "dp2");
  check(reference, with_plan(one, ScheduleKind::ZeroBubbleH1, 1, 2, 4), "dp4 zb-h1 (split backward)");
}

TEST_P(ZeroEquivalence, ZeroOneWithAPipeline) {
  const Experiment one = with_adam(testing::small_experiment());
  const std::vector<double> reference = testing::losses_of(testing::on_backend(one, "cpu"), "one device");
  const Experiment pipeline = with_plan(one, ScheduleKind::OneFOneB, 2, 4, 2);
  const testing::RunOutput run = run_experiment(sharded(pipeline, 1));
  ASSERT_EQ(run.state, RunState::Finished) << run.error;
  testing::expect_same_curve(reference, run.losses(), kZeroTolerance, "dp2 x pp2 zero 1");
}

TEST_P(ZeroEquivalence, WithTensorParallelism) {
  const Experiment one = testing::tiny_gpt_experiment();
  const std::vector<double> reference = testing::losses_of(testing::on_backend(one, "cpu"), "one device");
  check(reference, with_plan(one, ScheduleKind::OneFOneB, 1, 2, 2, 2), "gpt dp2 x tp2");
}

// Sequence parallelism leaves the norms' gradients partial on each
// tensor-parallel shard, summed over the group once per step; under zero 2
// the layers hold no gradients by then, so the group sums the parts of each
// device's slice that hold them (summed over the replicas already: the two
// sums commute). Compared with the same split at zero 0.
TEST_P(ZeroEquivalence, WithSequenceParallelism) {
  Experiment plan = with_plan(testing::tiny_gpt_experiment(), ScheduleKind::OneFOneB, 1, 2, 2, 2);
  plan.parallel.sequence_parallel = true;
  const std::vector<double> reference = testing::losses_of(plan, "gpt dp2 x tp2 sp");
  check(reference, plan, "gpt dp2 x tp2 sp");
}

TEST_P(ZeroEquivalence, WithExpertParallelism) {
  // The experts' state is shared over the replicas holding the same experts.
  Experiment plan = with_plan(with_adam(testing::small_moe_experiment(2, 2.0)), ScheduleKind::OneFOneB, 1, 2, 4);
  plan.parallel.ep = 2;
  const std::vector<double> reference = testing::losses_of(plan, "dp4 ep2");
  check(reference, plan, "dp4 ep2");
}

TEST_P(ZeroEquivalence, EachReplicaHoldsItsSliceOfTheState) {
  Experiment plan = with_plan(with_adam(testing::small_experiment()), ScheduleKind::OneFOneB, 1, 2, 4);
  plan.training.steps = 2;
  const testing::RunOutput plain = run_experiment(plan);
  const testing::RunOutput one = run_experiment(sharded(plan, 1));
  const testing::RunOutput two = run_experiment(sharded(plan, 2));
  for (const testing::RunOutput* run : {&plain, &one, &two}) ASSERT_EQ(run->state, RunState::Finished) << run->error;
  for (int device = 0; device < 4; ++device) {
    const std::string where = "device " + std::to_string(device);
    const int64_t state = peak(plain.trace, device, MemoryCategory::OptimizerState);
    const int64_t gradients = peak(plain.trace, device, MemoryCategory::Gradients);
    ASSERT_GT(state, 0) << where;
    // A quarter, rounded up to whole values per slot (the flat buffer is padded).
    EXPECT_GE(peak(one.trace, device, MemoryCategory::OptimizerState), state / 4) << where;
    EXPECT_LE(peak(one.trace, device, MemoryCategory::OptimizerState), state / 4 + 64) << where;
    EXPECT_EQ(peak(one.trace, device, MemoryCategory::Gradients), gradients) << where;
    EXPECT_LE(peak(two.trace, device, MemoryCategory::OptimizerState), state / 4 + 64) << where;
    // Zero 2 keeps the slice of the gradients; whole ones exist only from a
    // backward to its scatter, as the scatter's buffer.
    EXPECT_GE(peak(two.trace, device, MemoryCategory::Gradients), gradients / 4) << where;
    EXPECT_LE(peak(two.trace, device, MemoryCategory::Gradients), gradients / 4 + 32) << where;
    EXPECT_GE(peak(two.trace, device, MemoryCategory::CommBuffers), gradients) << where;
  }
}

// Zero 3: between uses a replica holds only its slice of each layer's
// weights; a layer's whole weights are gathered (communication buffers) for
// each forward and backward that reads them and freed after it.
TEST_P(ZeroEquivalence, ZeroThreeHoldsASliceOfTheWeights) {
  Experiment plan =
      with_plan(with_adam(testing::small_experiment()), ScheduleKind::OneFOneB, 1, 2, 4);
  plan.training.steps = 2;
  const testing::RunOutput plain = run_experiment(plan);
  const testing::RunOutput three = run_experiment(sharded(plan, 3));
  ASSERT_EQ(plain.state, RunState::Finished) << plain.error;
  ASSERT_EQ(three.state, RunState::Finished) << three.error;
  const int layers_with_weights = 4;  // small_experiment: four linears
  for (int device = 0; device < 4; ++device) {
    const std::string where = "device " + std::to_string(device);
    const int64_t weights = peak(plain.trace, device, MemoryCategory::Weights);
    const int64_t state = peak(plain.trace, device, MemoryCategory::OptimizerState);
    ASSERT_GT(weights, 0) << where;
    // Never all of them whole, not even while the stage is built: each
    // layer is sliced as soon as it exists.
    int64_t built_whole = 0;
    for (const MemorySample& sample : three.trace.memory)
      if (sample.device == device)
        built_whole =
            std::max(built_whole, sample.bytes[static_cast<int>(MemoryCategory::Weights)]);
    EXPECT_LT(built_whole, weights) << where;
    // A quarter of each layer's weights, padded to whole values per member.
    EXPECT_GE(peak(three.trace, device, MemoryCategory::Weights), weights / 4) << where;
    EXPECT_LE(peak(three.trace, device, MemoryCategory::Weights),
              weights / 4 + 16 * layers_with_weights)
        << where;
    EXPECT_LE(peak(three.trace, device, MemoryCategory::OptimizerState),
              state / 4 + 32 * layers_with_weights)
        << where;
    // The gradients' slices too: each layer's whole gradients live from its
    // backward to its scatter, as communication buffers.
    EXPECT_LE(peak(three.trace, device, MemoryCategory::Gradients),
              weights / 4 + 16 * layers_with_weights)
        << where;
    // What is whole at a time, as communication buffers: the running layer's
    // weights and gradients, the next layer's weights (FSDP's prefetch) and
    // one collective's flat buffer: at most five of the largest layer.
    const int64_t largest_layer = (16 * 16 + 16) * int64_t{sizeof(float)};
    EXPECT_LE(peak(three.trace, device, MemoryCategory::CommBuffers), 5 * largest_layer) << where;
    // The prefetch: while a forward runs, the next layer is gathered before
    // the running one is freed.
    double forward_begin = 0, forward_end = 0;
    for (const TraceEvent& event : three.trace.events)
      if (event.device == device && event.op.kind == OpKind::Forward) {
        forward_begin = event.t_begin;
        forward_end = event.t_end;
      }
    int64_t in_forward = 0;
    for (const MemorySample& sample : three.trace.memory)
      if (sample.device == device && sample.t > forward_begin && sample.t < forward_end)
        in_forward =
            std::max(in_forward, sample.bytes[static_cast<int>(MemoryCategory::CommBuffers)]);
    // Without it a forward holds at most one layer and its gather's flat
    // buffer, and on the cpu backend the ring's chunks in flight (another
    // layer at most): two layers on cuda, three on the cpu (measured on an
    // H200: exactly three on cuda, the prefetched layer the third).
    const int64_t without_prefetch = (backend() == "cpu" ? 3 : 2) * largest_layer;
    EXPECT_GT(in_forward, without_prefetch) << where;
  }
  // Every F and B on a device reports the gathers of the layers it read as
  // the schedule's ALL_GATHER before it, and every B the scatters of their
  // gradients as the REDUCE_SCATTER after it: inside the op, a whole
  // stage's bytes.
  const auto on_device_0 = [&](OpKind kind) {
    std::vector<const TraceEvent*> events;
    for (const TraceEvent& event : three.trace.events)
      if (event.device == 0 && event.op.kind == kind) events.push_back(&event);
    std::sort(events.begin(), events.end(),
              [](const TraceEvent* a, const TraceEvent* b) { return a->t_begin < b->t_begin; });
    return events;
  };
  const std::vector<const TraceEvent*> forwards = on_device_0(OpKind::Forward);
  const std::vector<const TraceEvent*> backwards = on_device_0(OpKind::Backward);
  std::vector<const TraceEvent*> compute = forwards;
  compute.insert(compute.end(), backwards.begin(), backwards.end());
  std::sort(compute.begin(), compute.end(),
            [](const TraceEvent* a, const TraceEvent* b) { return a->t_begin < b->t_begin; });
  const std::vector<const TraceEvent*> gathers = on_device_0(OpKind::AllGather);
  const std::vector<const TraceEvent*> scatters = on_device_0(OpKind::ReduceScatter);
  ASSERT_EQ(gathers.size(), compute.size());
  ASSERT_EQ(scatters.size(), backwards.size());
  const int64_t whole = peak(plain.trace, 0, MemoryCategory::Weights);
  const auto expect_inside = [&](const TraceEvent& collective, const TraceEvent& op) {
    const std::string what = op_label(collective.op) + " in " + op_label(op.op);
    EXPECT_EQ(collective.op.group, CommGroup::DataParallel) << what;
    EXPECT_EQ(collective.op.step, op.op.step) << what;
    EXPECT_EQ(collective.op.microbatch, op.op.microbatch) << what;
    EXPECT_GE(collective.t_begin, op.t_begin) << what;
    EXPECT_LE(collective.t_end, op.t_end) << what;
    EXPECT_GE(collective.bytes, whole) << what;
  };
  for (size_t i = 0; i < compute.size(); ++i) expect_inside(*gathers[i], *compute[i]);
  for (size_t i = 0; i < backwards.size(); ++i) expect_inside(*scatters[i], *backwards[i]);
}

// Without resharding after the forward (FSDP's reshard_after_forward =
// false) the gathered weights stay from a forward to its backward: the
// same curve, no gather before a B, and the whole weights held meanwhile.
TEST_P(ZeroEquivalence, ZeroThreeWithoutReshardingKeepsTheGatheredWeights) {
  Experiment plan =
      with_plan(with_adam(testing::small_experiment()), ScheduleKind::OneFOneB, 1, 2, 4);
  const std::vector<double> reference = testing::losses_of(plan, "dp4 zero 0");
  Experiment kept = sharded(plan, 3);
  kept.parallel.reshard_after_forward = false;
  for (ScheduleKind schedule : {ScheduleKind::OneFOneB, ScheduleKind::GPipe}) {
    kept.parallel.schedule = schedule;
    const testing::RunOutput run = run_experiment(kept);
    ASSERT_EQ(run.state, RunState::Finished) << run.error;
    testing::expect_same_curve(reference, run.losses(), kZeroTolerance,
                               std::string("zero 3 kept, ") + schedule_name(schedule));
    int forwards = 0, backwards = 0, gathers = 0;
    for (const TraceEvent& event : run.trace.events) {
      if (event.device != 0) continue;
      forwards += event.op.kind == OpKind::Forward;
      backwards += event.op.kind == OpKind::Backward;
      gathers += event.op.kind == OpKind::AllGather;
    }
    ASSERT_GT(backwards, 0);
    // 1F1B: one gather per micro-batch's F; GPipe: one per step.
    EXPECT_EQ(gathers, schedule == ScheduleKind::GPipe ? kept.training.steps : forwards);
    EXPECT_GE(peak(run.trace, 0, MemoryCategory::CommBuffers),
              peak(run.trace, 0, MemoryCategory::Weights) * 4 - 64);
  }
}

// ZeRO-Offload: each replica's slice of the optimizer state and its master
// weights live on the host, where U steps them; OFFLOAD brings the slice's
// summed gradients down and RELOAD the new weights up for the gather. The
// curve stays the one device's, and the device holds no optimizer state.
TEST_P(ZeroEquivalence, ZeroOffloadStepsEachSliceOnTheHost) {
  const Experiment one = with_adam(testing::small_experiment());
  const std::vector<double> reference =
      testing::losses_of(testing::on_backend(one, "cpu"), "one device");
  Experiment offloaded = with_plan(one, ScheduleKind::OneFOneB, 1, 2, 4);
  offloaded.parallel.offload = OffloadMode::Optimizer;
  check(reference, offloaded, "dp4 offload optimizer");
  Experiment pipeline = with_plan(one, ScheduleKind::OneFOneB, 2, 4, 2);
  pipeline.parallel.offload = OffloadMode::Optimizer;
  const testing::RunOutput piped = run_experiment(sharded(pipeline, 1));
  ASSERT_EQ(piped.state, RunState::Finished) << piped.error;
  testing::expect_same_curve(reference, piped.losses(), kZeroTolerance,
                             "dp2 x pp2 zero 1 offload optimizer");

  Experiment plan =
      with_plan(with_adam(testing::small_experiment()), ScheduleKind::OneFOneB, 1, 2, 4);
  plan.training.steps = 2;
  const testing::RunOutput plain = run_experiment(plan);
  Experiment host = sharded(plan, 2);
  host.parallel.offload = OffloadMode::Optimizer;
  const testing::RunOutput sliced = run_experiment(host);
  ASSERT_EQ(plain.state, RunState::Finished) << plain.error;
  ASSERT_EQ(sliced.state, RunState::Finished) << sliced.error;
  for (int device = 0; device < 4; ++device) {
    const std::string where = "device " + std::to_string(device);
    const int64_t state = peak(plain.trace, device, MemoryCategory::OptimizerState);
    const int64_t weights = peak(plain.trace, device, MemoryCategory::Weights);
    EXPECT_EQ(peak(sliced.trace, device, MemoryCategory::OptimizerState), 0) << where;
    // On the host: a quarter of the state, plus the slice's master weights and gradients.
    const int64_t on_host = peak(sliced.trace, device, MemoryCategory::Host);
    EXPECT_GE(on_host, state / 4 + 2 * weights / 4) << where;
    EXPECT_LE(on_host, state / 4 + 2 * weights / 4 + 256) << where;
  }
  // The trace shows each step's OFFLOAD and RELOAD of the slice.
  int offloads = 0, reloads = 0;
  for (const TraceEvent& event : sliced.trace.events) {
    offloads += event.op.kind == OpKind::Offload && event.device == 0;
    reloads += event.op.kind == OpKind::Reload && event.device == 0;
  }
  EXPECT_EQ(offloads, 2);
  EXPECT_EQ(reloads, 2);
}

}  // namespace
}  // namespace pipelab
