// Every generator's output passes the validator, compute-only and lowered, over
// a sweep of pipeline depths and micro-batch counts.
#include <gtest/gtest.h>

#include <cstdio>
#include <ctime>
#include <stdexcept>

#include "core/schedule/generators.h"
#include "core/schedule/lowering.h"
#include "core/schedule/validator.h"
#include "schedule_test_util.h"

namespace pipelab {
namespace {

const int kMicrobatchSamples[] = {1, 2, 3, 4, 7, 8, 16, 31, 32, 64};
const ScheduleKind kKinds[] = {ScheduleKind::GPipe,           ScheduleKind::OneFOneB,
                               ScheduleKind::Interleaved1F1B, ScheduleKind::ZeroBubbleH1,
                               ScheduleKind::ZeroBubbleV,     ScheduleKind::DualPipeV,
                               ScheduleKind::PipeDream,       ScheduleKind::PipeDream2BW,
                               ScheduleKind::PipeMare};

// The options that make sense for (kind, pp, m): interleaved uses 2 chunks and
// needs m % pp == 0, zb-v has exactly 2 chunks, dualpipev 2 chunks and m >= 2 pp,
// pipedream-2bw needs m >= pp.
// Returns false to skip.
bool options_for(ScheduleKind kind, int pp, int m, int chunks, GeneratorOptions& options) {
  options = {kind, pp, m, 1, 0};
  if (kind == ScheduleKind::Interleaved1F1B) {
    if (m % pp != 0) return false;
    options.chunks = chunks;
  }
  if (uses_v_placement(kind)) options.chunks = 2;
  if (kind == ScheduleKind::DualPipeV && m < 2 * pp) return false;
  if (kind == ScheduleKind::PipeDream2BW && m < pp) return false;
  return true;
}

std::string describe(const GeneratorOptions& options) {
  return std::string(schedule_name(options.kind)) + " pp " + std::to_string(options.pp) + " m " +
         std::to_string(options.microbatches) + " chunks " + std::to_string(options.chunks);
}

ParallelPlan plan_for(const GeneratorOptions& options, int dp, int tp) {
  ParallelPlan plan;
  plan.schedule = options.kind;
  plan.pp = options.pp;
  plan.microbatches = options.microbatches;
  plan.chunks = options.chunks;
  plan.dp = dp;
  plan.tp = tp;
  return plan;
}

TEST(AllSchedules, ComputeOnlyAndLoweredPassTheValidator) {
  for (ScheduleKind kind : kKinds) {
    for (int pp = 1; pp <= 16; ++pp) {
      for (int m : kMicrobatchSamples) {
        for (int chunks : {2, 3}) {
          if (chunks == 3 && kind != ScheduleKind::Interleaved1F1B) continue;
          GeneratorOptions options;
          if (!options_for(kind, pp, m, chunks, options)) continue;
          const Schedule compute = generate_schedule(options);
          const ValidationReport report = validate_schedule(compute);
          ASSERT_TRUE(report.ok()) << describe(options) << "\n" << testing::errors_text(report);
          const Schedule lowered = lower_schedule(compute, plan_for(options, 1, 1));
          const ValidationReport lowered_report = validate_schedule(lowered);
          ASSERT_TRUE(lowered_report.ok()) << describe(options) << " lowered\n"
                                           << testing::errors_text(lowered_report);
        }
      }
    }
  }
}

TEST(AllSchedules, LoweredWithReplicasShardsRecomputeOffloadAndAsyncPassTheValidator) {
  for (ScheduleKind kind : kKinds) {
    for (int pp : {1, 2, 3, 4, 5, 8}) {
      for (int m : {1, 3, 4, 8, 16}) {
        GeneratorOptions options;
        if (!options_for(kind, pp, m, 2, options)) continue;
        for (int dp : {1, 2}) {
          for (int tp : {1, 2}) {
            // Activations kept, recomputed, or offloaded (the two exclude each other).
            for (int memory : {0, 1, 2}) {
              for (UpdateMode update : {UpdateMode::Sync, UpdateMode::Async}) {
                if (update == UpdateMode::Async && (dp == 1 || is_asynchronous(kind))) continue;
                ParallelPlan plan = plan_for(options, dp, tp);
                plan.recompute = memory == 1;
                plan.offload = memory == 2 ? OffloadMode::Activations : OffloadMode::None;
                plan.update = update;
                const Schedule lowered = build_schedule(plan);
                const ValidationReport report = validate_schedule(lowered);
                ASSERT_TRUE(report.ok())
                    << describe(options) << " dp " << dp << " tp " << tp << " recompute "
                    << plan.recompute << " offload " << offload_name(plan.offload) << " "
                    << update_name(update) << "\n"
                    << testing::errors_text(report);
              }
            }
          }
        }
      }
    }
  }
}

TEST(AllSchedules, AsyncDataParallelPassesForEveryStaleness) {
  for (int staleness : {0, 1, 2, 3}) {
    ParallelPlan plan;
    plan.schedule = ScheduleKind::ZeroBubbleH1;
    plan.pp = 3;
    plan.dp = 3;
    plan.microbatches = 4;
    plan.update = UpdateMode::Async;
    plan.staleness = staleness;
    const Schedule lowered = build_schedule(plan);
    EXPECT_EQ(lowered.steps, staleness + 2);
    const ValidationReport report = validate_schedule(lowered);
    EXPECT_TRUE(report.ok()) << "staleness " << staleness << "\n" << testing::errors_text(report);
  }
}

TEST(AllSchedules, ValidatorScalesToLargePlans) {
  // p = 64, m = 1024, dp = 8: about three million ops.
  ParallelPlan plan;
  plan.schedule = ScheduleKind::OneFOneB;
  plan.pp = 64;
  plan.microbatches = 1024;
  plan.dp = 8;
  const Schedule lowered = build_schedule(plan);
  // Processor time, not wall time, so a busy machine does not fail the test.
  const std::clock_t start = std::clock();
  const ValidationReport report = validate_schedule(lowered);
  const double seconds = static_cast<double>(std::clock() - start) / CLOCKS_PER_SEC;
  EXPECT_TRUE(report.ok()) << testing::errors_text(report);
#ifdef NDEBUG  // the bound is for optimised builds
  EXPECT_LT(seconds, 1.0);
#endif
  std::printf("validated %d devices in %.3f s of processor time\n", lowered.device_count(),
              seconds);
}

}  // namespace
}  // namespace pipelab
