// Convolutional networks with batch norm on the CPU executor: synced batch
// norm in data parallel trains exactly like one device on the whole batch
// (its statistics are summed over the replicas by collectives the schedule
// lists), local batch norm does not, and a convolutional pipeline trains like
// one device when every stage sees whole micro-batches.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "core/runtime/threaded_executor.h"
#include "tests/support/runtime_test_support.h"

namespace pipelab {
namespace {

using testing::losses_of;
using testing::run_experiment;
using testing::small_conv_experiment;
using testing::with_plan;

TEST(BatchNormTraining, SyncedBatchNormInDataParallelEqualsOneDeviceOnTheWholeBatch) {
  const std::vector<double> single = losses_of(small_conv_experiment(true), "one device");
  ASSERT_EQ(single.size(), 20u);
  EXPECT_LT(single.back(), single.front());
  for (const int dp : {2, 4})
    testing::expect_same_curve(single, losses_of(with_plan(small_conv_experiment(true), ScheduleKind::GPipe, 1, 1, dp),
                                                 "synced dp" + std::to_string(dp)),
                               1e-4, "synced batch norm, dp " + std::to_string(dp));
  testing::expect_same_curve(
      single, losses_of(with_plan(small_conv_experiment(true), ScheduleKind::OneFOneB, 2, 1, 2), "synced dp2 x pp2"), 1e-4,
      "synced batch norm, dp 2 x pp 2");
}

TEST(BatchNormTraining, LocalBatchNormInDataParallelNormalisesEachReplicasShare) {
  const std::vector<double> single = losses_of(small_conv_experiment(false), "one device");
  const std::vector<double> local =
      losses_of(with_plan(small_conv_experiment(false), ScheduleKind::GPipe, 1, 1, 2), "local dp2");
  ASSERT_EQ(local.size(), single.size());
  double largest = 0;
  for (size_t i = 0; i < single.size(); ++i) largest = std::max(largest, std::fabs(local[i] - single[i]));
  EXPECT_GT(largest, 1e-3) << "local batch norm should see half the batch and train differently";
  EXPECT_LT(local.back(), local.front());
}

TEST(BatchNormTraining, ConvolutionalPipelineTrainsLikeOneDevicePerMicrobatch) {
  // Batch norm works per micro-batch, so the reference cuts the batch the same way.
  const std::vector<double> single =
      losses_of(with_plan(small_conv_experiment(false), ScheduleKind::GPipe, 1, 4), "one device, m4");
  for (const ScheduleKind kind : {ScheduleKind::GPipe, ScheduleKind::OneFOneB, ScheduleKind::ZeroBubbleH1})
    testing::expect_same_curve(single, losses_of(with_plan(small_conv_experiment(false), kind, 3, 4), "pp3 m4"), 1e-4,
                               std::string(schedule_name(kind)) + " pp3 m4");
  Experiment recomputed = with_plan(small_conv_experiment(false), ScheduleKind::OneFOneB, 2, 4);
  recomputed.parallel.recompute = true;  // running statistics must not move twice
  testing::expect_same_curve(single, losses_of(recomputed, "recompute"), 1e-4, "1f1b pp2 m4 with recompute");
}

TEST(BatchNormTraining, OffloadedActivationsOfResidualBlocksComeBackUnchanged) {
  const Experiment kept = with_plan(small_conv_experiment(false), ScheduleKind::GPipe, 2, 4);
  Experiment offloaded = kept;
  offloaded.parallel.offload = OffloadMode::Activations;
  const testing::RunOutput run = run_experiment(offloaded);
  ASSERT_EQ(run.state, RunState::Finished) << run.error;
  EXPECT_EQ(run.losses(), losses_of(kept, "kept on the device"));
  int64_t offloaded_bytes = 0;
  for (const TraceEvent& event : run.trace.events)
    if (event.op.kind == OpKind::Offload) offloaded_bytes += event.bytes;
  EXPECT_GT(offloaded_bytes, 0);
}

TEST(BatchNormTraining, EverySyncedStatisticsAllReduceIsListedAndReportedWithItsBytes) {
  Experiment experiment = with_plan(small_conv_experiment(true), ScheduleKind::OneFOneB, 2, 2, 2);
  experiment.training.steps = 2;
  const testing::RunOutput run = run_experiment(experiment);
  ASSERT_EQ(run.state, RunState::Finished) << run.error;
  // Per replica, step and micro-batch: batchnorm 1 pair, residual block 3 pairs.
  int forward = 0, backward = 0;
  for (const TraceEvent& event : run.trace.events) {
    if (event.op.kind != OpKind::AllReduce || event.op.group != CommGroup::DataParallel || event.op.layer < 0)
      continue;
    ASSERT_GT(event.bytes, 0);
    if (event.op.layer == 1) {
      EXPECT_TRUE(event.bytes == (2 * 4 + 1) * 4 || event.bytes == 2 * 4 * 4) << event.bytes;
    }
    if (event.op.layer == 3) {
      EXPECT_TRUE(event.bytes == (2 * 6 + 1) * 4 || event.bytes == 2 * 6 * 4) << event.bytes;
    }
    (event.bytes % 8 == 4 ? forward : backward)++;
  }
  const int per_pass = 2 /*replicas*/ * 2 /*steps*/ * 2 /*micro-batches*/ * 4 /*batch norms*/;
  EXPECT_EQ(forward, per_pass);
  EXPECT_EQ(backward, per_pass);
}

}  // namespace
}  // namespace pipelab
