#include "core/sim/timeline_text.h"

#include <gtest/gtest.h>

#include <stdexcept>

#include "core/schedule/lowering.h"
#include "core/sim/simulator.h"

namespace pipelab {
namespace {

Trace unit_trace(ScheduleKind kind, int p, int m, int chunks = 1) {
  ParallelPlan plan;
  plan.schedule = kind;
  plan.pp = p;
  plan.microbatches = m;
  plan.chunks = chunks;
  return simulate(build_schedule(plan), CostModel::unit(UnitCosts{1, 1, 1, 0, 0})).trace;
}

TEST(TimelineTextTest, GPipeTwoStagesTwoMicrobatches) {
  // Forwards one slot each; each backward (b + w) one box over two slots.
  const std::string expected =
      "slot  |0 |1 |2 |3 |4 |5 |6 |7 |8 |\n"
      "dev 0 |F0|F1|  |  |  |B0   |B1   |\n"
      "dev 1 |  |F0|F1|B0   |B1   |  |  |\n";
  EXPECT_EQ(format_timeline_grid(unit_trace(ScheduleKind::GPipe, 2, 2), 2, 1.0), expected);
}

TEST(TimelineTextTest, WiderLabelsWidenEveryCell) {
  const std::string grid = format_timeline_grid(unit_trace(ScheduleKind::OneFOneB, 2, 12), 2, 1.0);
  EXPECT_NE(grid.find("|F11|"), std::string::npos) << grid;
  EXPECT_NE(grid.find("|0  |1  |"), std::string::npos) << grid;
  EXPECT_NE(grid.find("|B11    |"), std::string::npos) << grid;  // 2 cells + 1 bar
}

TEST(TimelineTextTest, ChunksAndSplitBackwardsAreLabelled) {
  const std::string interleaved =
      format_timeline_grid(unit_trace(ScheduleKind::Interleaved1F1B, 2, 2, 2), 2, 1.0);
  EXPECT_NE(interleaved.find("F0.1"), std::string::npos) << interleaved;
  const std::string zero_bubble =
      format_timeline_grid(unit_trace(ScheduleKind::ZeroBubbleH1, 2, 2), 2, 1.0);
  EXPECT_NE(zero_bubble.find("|BI0|"), std::string::npos) << zero_bubble;
  EXPECT_NE(zero_bubble.find("|BW0|"), std::string::npos) << zero_bubble;
}

TEST(TimelineTextTest, CoarserSlotsShrinkTheGrid) {
  // With slot = 3 units an F (1 unit) rounds to no slot but still shows as one.
  const Trace trace = unit_trace(ScheduleKind::GPipe, 2, 2);
  const std::string grid = format_timeline_grid(trace, 2, 3.0);
  EXPECT_EQ(grid.substr(0, grid.find('\n')), "slot  |0 |1 |2 |");
  EXPECT_THROW(format_timeline_grid(trace, 2, 0.0), std::invalid_argument);
}

TEST(TimelineTextTest, EmptyTraceGivesEmptyRows) {
  EXPECT_EQ(format_timeline_grid(Trace{}, 1, 1.0), "slot  |\ndev 0 |\n");
}

}  // namespace
}  // namespace pipelab
