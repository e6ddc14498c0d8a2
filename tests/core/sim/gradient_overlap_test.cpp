// Overlapped gradient reduction (simulator.h): the data-parallel all-reduce
// runs in buckets on the communication lane under the last backward, and only
// what does not fit under it is exposed before the update.
#include <gtest/gtest.h>

#include "core/io/hardware_catalogue.h"
#include "core/schedule/lowering.h"
#include "core/sim/simulator.h"

namespace pipelab {
namespace {

struct Overlap {
  double makespan_off = 0;
  double makespan_on = 0;
  double full_reduction = 0;  // one all-reduce of every gradient
  double bucket = 0;          // one bucket's all-reduce
  double backward = 0;
  TraceEvent reduction;       // device 0's, overlapped
  double backward_begin = 0;
};

// dp 2, one stage, one micro-batch on cpu-core (5 GB/s link, 50 GFLOP/s);
// 100 M parameters: 400 MB of gradients, three 160 MB buckets.
Overlap run(double backward_flops) {
  ParallelPlan plan;
  plan.dp = 2;
  plan.microbatches = 1;
  StageProfile stage;
  stage.forward_flops = 1e9;
  stage.backward_input_flops = backward_flops / 2;
  stage.backward_weight_flops = backward_flops / 2;
  stage.params = 100'000'000;
  const std::vector<StageProfile> stages{stage};
  const DeviceProfile cpu = *find_device_profile("cpu-core");
  const CostModel cost = CostModel::from_profiles(stages, cpu, 0);
  const Schedule schedule = build_schedule(plan, stages);
  SimulationOptions overlapped;
  overlapped.overlap_gradient_reduction = true;
  const SimulationResult on = simulate(schedule, cost, overlapped);
  const SimulationResult off = simulate(schedule, cost);

  Overlap result;
  result.makespan_off = off.makespan;
  result.makespan_on = on.makespan;
  const double bytes = 4e8;
  result.full_reduction = bytes / cpu.link_bandwidth + 2 * cpu.link_latency_s;
  result.bucket = int64_t{400'000'000} / 3 / cpu.link_bandwidth + 2 * cpu.link_latency_s;
  result.backward = backward_flops / cpu.flops_per_s;
  for (const TraceEvent& event : on.trace.events) {
    if (event.device != 0) continue;
    if (event.op.kind == OpKind::AllReduce) result.reduction = event;
    if (event.op.kind == OpKind::Backward) result.backward_begin = event.t_begin;
  }
  return result;
}

TEST(GradientOverlap, ABackwardLongerThanTheReductionHidesAllButTheLastBucket) {
  const Overlap overlap = run(5e9);  // 0.1 s of backward, 0.08 s of reduction
  ASSERT_GT(overlap.backward, overlap.full_reduction);
  // Each bucket starts when the backward has produced it; the last one is
  // ready as the backward ends, so exactly one bucket is exposed.
  EXPECT_NEAR(overlap.makespan_off - overlap.makespan_on, overlap.full_reduction - overlap.bucket, 1e-9);
  EXPECT_NEAR(overlap.reduction.t_begin, overlap.backward_begin + overlap.backward / 3, 1e-9);
  EXPECT_LT(overlap.reduction.t_begin, overlap.backward_begin + overlap.backward);
}

TEST(GradientOverlap, AShortBackwardHidesOnlyWhatFitsUnderIt) {
  const Overlap overlap = run(5e8);  // 0.01 s of backward under 0.08 s of reduction
  ASSERT_LT(overlap.backward, overlap.full_reduction);
  // The buckets run back to back from the first one's readiness: the exposed
  // part is the three buckets minus the backward they started under.
  const double exposed = overlap.backward / 3 + 3 * overlap.bucket - overlap.backward;
  EXPECT_NEAR(overlap.makespan_on - (overlap.makespan_off - overlap.full_reduction), exposed, 1e-9);
  EXPECT_LT(overlap.makespan_on, overlap.makespan_off);
}

}  // namespace
}  // namespace pipelab
