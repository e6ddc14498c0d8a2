// Data parallelism: the synchronous all-reduce makes replicas wait for each
// other; the asynchronous parameter server lets a fast replica run ahead by
// at most `staleness` steps.
#include <gtest/gtest.h>

#include <algorithm>

#include "core/schedule/lowering.h"
#include "core/io/hardware_catalogue.h"
#include "core/sim/simulator.h"

namespace pipelab {
namespace {

std::vector<TraceEvent> events_of(const SimulationResult& result, int device, OpKind kind) {
  std::vector<TraceEvent> events;
  for (const TraceEvent& event : result.trace.events)
    if (event.device == device && event.op.kind == kind) events.push_back(event);
  return events;
}

double device_end(const SimulationResult& result, int device) {
  double end = 0;
  for (const TraceEvent& event : result.trace.events)
    if (event.device == device) end = std::max(end, event.t_end);
  return end;
}

TEST(SimulatorDataParallelTest, AllReduceMakesReplicasWaitForEachOther) {
  ParallelPlan plan;
  plan.dp = 2;
  plan.pp = 2;
  plan.microbatches = 4;
  const Schedule schedule = build_schedule(plan);
  // Device 2 is replica 1's first stage; make it a straggler.
  CostModel cost = CostModel::unit(UnitCosts{1, 1, 1, 0, 0});
  cost.set_compute_slowdown(2, 2.0);
  const SimulationResult result = simulate(schedule, cost);

  const auto fast = events_of(result, 0, OpKind::AllReduce);
  const auto slow = events_of(result, 2, OpKind::AllReduce);
  ASSERT_EQ(fast.size(), 1u);
  ASSERT_EQ(slow.size(), 1u);
  EXPECT_EQ(fast[0].op.group, CommGroup::DataParallel);
  // Both finish together; the fast replica spent the difference waiting.
  EXPECT_DOUBLE_EQ(fast[0].t_end, slow[0].t_end);
  EXPECT_LT(fast[0].t_begin, slow[0].t_begin);
  EXPECT_GT(result.per_device[0].comm, result.per_device[2].comm);
  EXPECT_DOUBLE_EQ(device_end(result, 0), device_end(result, 2));

  // Without the straggler nobody waits in the all-reduce.
  const SimulationResult even = simulate(schedule, CostModel::unit(UnitCosts{1, 1, 1, 0, 0}));
  const auto even_fast = events_of(even, 0, OpKind::AllReduce);
  const auto even_slow = events_of(even, 2, OpKind::AllReduce);
  EXPECT_DOUBLE_EQ(even_fast[0].t_begin, even_slow[0].t_begin);
  EXPECT_LT(even.makespan, result.makespan);
}

TEST(SimulatorDataParallelTest, AllReduceTakesTheRingTime) {
  ParallelPlan plan;
  plan.dp = 4;
  plan.microbatches = 2;
  StageProfile stage;
  stage.forward_flops = 1e6;
  stage.backward_input_flops = 1e6;
  stage.backward_weight_flops = 1e6;
  stage.params = 1'000'000;
  const std::vector<StageProfile> stages{stage};
  const DeviceProfile device = *find_device_profile("h100");
  const SimulationResult result =
      simulate(build_schedule(plan, stages), CostModel::from_profiles(stages, device, 0));
  const auto reduces = events_of(result, 0, OpKind::AllReduce);
  ASSERT_EQ(reduces.size(), 1u);
  const double bytes = 4e6;
  const double ring = 2.0 * 3 / 4 * bytes / device.link_bandwidth + 6 * device.link_latency_s;
  EXPECT_NEAR(reduces[0].t_end - reduces[0].t_begin, ring, 1e-12);
}

// Replica 1 computes `slowdown` times slower; returns, over replica 0's
// steps, the most steps it had finished beyond replica 1 when starting one.
int largest_lead(int staleness, double slowdown, double* fast_end = nullptr) {
  ParallelPlan plan;
  plan.dp = 2;
  plan.pp = 1;
  plan.microbatches = 2;
  plan.update = UpdateMode::Async;
  plan.staleness = staleness;
  const int steps = 8;
  const Schedule schedule = build_schedule(plan, {}, steps);
  CostModel cost = CostModel::unit(UnitCosts{1, 1, 1, 0, 0});
  cost.set_compute_slowdown(1, slowdown);
  const SimulationResult result = simulate(schedule, cost);
  const auto slow_pushes = events_of(result, 1, OpKind::PushGradient);
  EXPECT_EQ(static_cast<int>(slow_pushes.size()), steps);
  int lead = 0;
  for (int step = 1; step < steps; ++step) {
    double start = -1;
    for (const TraceEvent& event : events_of(result, 0, OpKind::Forward))
      if (event.op.step == step) {
        start = event.t_begin;
        break;
      }
    EXPECT_GE(start, 0);
    const int slow_done = static_cast<int>(
        std::count_if(slow_pushes.begin(), slow_pushes.end(),
                      [start](const TraceEvent& push) { return push.t_end <= start; }));
    lead = std::max(lead, step - slow_done);
  }
  if (fast_end) *fast_end = device_end(result, 0);
  return lead;
}

TEST(SimulatorDataParallelTest, AsyncReplicaRunsAheadByAtMostStaleness) {
  for (int staleness : {0, 1, 2}) {
    // A straggler four times slower pushes the fast replica right to the bound.
    EXPECT_EQ(largest_lead(staleness, 4.0), staleness) << "staleness " << staleness;
    // Equal replicas never get ahead.
    EXPECT_EQ(largest_lead(staleness, 1.0), 0) << "staleness " << staleness;
  }
  double end_sync = 0, end_stale = 0;
  largest_lead(0, 4.0, &end_sync);
  largest_lead(2, 4.0, &end_stale);
  EXPECT_LT(end_stale, end_sync);  // more staleness, less waiting
}

TEST(SimulatorDataParallelTest, TensorParallelShardsRunInLockstep) {
  ParallelPlan plan;
  plan.tp = 2;
  plan.pp = 2;
  plan.microbatches = 4;
  CostModel cost = CostModel::unit(UnitCosts{1, 1, 1, 0.25, 0});
  const SimulationResult result = simulate(build_schedule(plan), cost);
  // Devices 0 and 1 are the two shards of stage 0: every all-reduce ends at
  // the same time on both.
  const auto shard0 = events_of(result, 0, OpKind::AllReduce);
  const auto shard1 = events_of(result, 1, OpKind::AllReduce);
  ASSERT_FALSE(shard0.empty());
  ASSERT_EQ(shard0.size(), shard1.size());
  for (size_t i = 0; i < shard0.size(); ++i) {
    EXPECT_EQ(shard0[i].op.group, CommGroup::TensorParallel);
    EXPECT_DOUBLE_EQ(shard0[i].t_end, shard1[i].t_end);
  }
}

}  // namespace
}  // namespace pipelab
