#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "core/schedule/generators.h"

namespace pipelab {
namespace {

std::string error_of(const GeneratorOptions& options) {
  try {
    generate_schedule(options);
  } catch (const std::invalid_argument& error) {
    return error.what();
  }
  return "(no error)";
}

TEST(GenerateSchedule, RejectsBadOptionsNamingTheOptionAndTheFix) {
  EXPECT_EQ(error_of({ScheduleKind::OneFOneB, 0, 4, 1, 0}),
            "pp must be at least 1 (got 0); use pp = 1 for no pipeline parallelism");
  EXPECT_EQ(error_of({ScheduleKind::GPipe, 2, 0, 1, 0}),
            "microbatches must be at least 1 (got 0); use microbatches = 1 for no micro-batching");
  EXPECT_EQ(error_of({ScheduleKind::Interleaved1F1B, 2, 4, 0, 0}),
            "chunks must be at least 1 (got 0); use chunks = 1");
  EXPECT_EQ(error_of({ScheduleKind::OneFOneB, 2, 4, 1, -1}),
            "steps must be 0 (the default window) or positive (got -1); use steps = 0");
  EXPECT_EQ(error_of({ScheduleKind::OneFOneB, 2, 4, 2, 0}),
            "chunks = 2 needs schedule interleaved-1f1b (got 1f1b); set chunks = 1 or choose "
            "interleaved-1f1b");
  EXPECT_EQ(error_of({ScheduleKind::Interleaved1F1B, 4, 9, 2, 0}),
            "interleaved-1f1b needs microbatches (9) to be a multiple of its round count "
            "max(1, microbatches / pp) = 2 (as PyTorch's ScheduleInterleaved1F1B); every m < 2 * pp "
            "(8) and every multiple of pp works; try microbatches = 8 or 10");
  EXPECT_EQ(error_of({ScheduleKind::PipeDream2BW, 8, 4, 1, 0}),
            "pipedream-2bw needs microbatches (4) >= pp (8) so that two weight versions "
            "suffice; try microbatches = 8");
}

TEST(GenerateSchedule, IndividualGeneratorsCheckTheirArgumentsToo) {
  EXPECT_THROW(generate_gpipe(0, 1), std::invalid_argument);
  EXPECT_THROW(generate_1f1b(2, 0), std::invalid_argument);
  EXPECT_THROW(generate_interleaved_1f1b(4, 9, 2), std::invalid_argument);
  EXPECT_THROW(generate_zb_h1(-1, 4), std::invalid_argument);
  EXPECT_THROW(generate_pipedream(2, 2, -3), std::invalid_argument);
  EXPECT_THROW(generate_pipedream_2bw(4, 1, 0), std::invalid_argument);
}

TEST(GenerateSchedule, AcceptsInterleavedWithOneChunkForAnyM) {
  EXPECT_NO_THROW(generate_schedule({ScheduleKind::Interleaved1F1B, 4, 6, 1, 0}));
}

TEST(GenerateSchedule, DispatchesOnKindAndFillsTheFields) {
  for (ScheduleKind kind :
       {ScheduleKind::GPipe, ScheduleKind::OneFOneB, ScheduleKind::Interleaved1F1B,
        ScheduleKind::ZeroBubbleH1, ScheduleKind::PipeDream, ScheduleKind::PipeDream2BW}) {
    const int chunks = kind == ScheduleKind::Interleaved1F1B ? 2 : 1;
    const Schedule schedule = generate_schedule({kind, 4, 8, chunks, 0});
    EXPECT_EQ(schedule.kind, kind);
    EXPECT_EQ(schedule.pp, 4);
    EXPECT_EQ(schedule.chunks, chunks);
    EXPECT_EQ(schedule.microbatches, 8);
    EXPECT_EQ(schedule.dp, 1);
    EXPECT_EQ(schedule.tp, 1);
    EXPECT_FALSE(schedule.lowered);
    EXPECT_EQ(schedule.device_count(), 4);
    EXPECT_EQ(schedule.steps, default_steps(kind, 4, 8));
    EXPECT_EQ(schedule.steps, is_asynchronous(kind) ? 2 : 1);  // max(2, ceil(8 / 8) + 1)
  }
}

TEST(GenerateSchedule, SynchronousWindowRepeatsTheStepWithOneVersionPerStep) {
  const Schedule one = generate_schedule({ScheduleKind::ZeroBubbleH1, 3, 4, 1, 1});
  const Schedule three = generate_schedule({ScheduleKind::ZeroBubbleH1, 3, 4, 1, 3});
  EXPECT_EQ(three.steps, 3);
  for (int device = 0; device < 3; ++device) {
    const auto& step_ops = one.devices[device];
    const auto& ops = three.devices[device];
    ASSERT_EQ(ops.size(), 3 * step_ops.size());
    for (size_t i = 0; i < ops.size(); ++i) {
      const Op& original = step_ops[i % step_ops.size()];
      const int step = static_cast<int>(i / step_ops.size());
      EXPECT_EQ(ops[i].kind, original.kind);
      EXPECT_EQ(ops[i].microbatch, original.microbatch);
      EXPECT_EQ(ops[i].step, step);
      EXPECT_EQ(ops[i].weight_version, step);
    }
  }
}

}  // namespace
}  // namespace pipelab
