#include "core/sim/bubble_formula.h"

#include <gtest/gtest.h>

#include <stdexcept>

namespace pipelab {
namespace {

TEST(BubbleFormulaTest, FillDrainSchedules) {
  for (ScheduleKind kind : {ScheduleKind::GPipe, ScheduleKind::OneFOneB}) {
    EXPECT_DOUBLE_EQ(theoretical_bubble(kind, 4, 8, 1, UnitCosts{}), 3.0 / 11.0);
    EXPECT_DOUBLE_EQ(theoretical_bubble(kind, 1, 8, 1, UnitCosts{}), 0.0);
    EXPECT_EQ(bubble_formula_text(kind), "(p-1)/(m+p-1)");
    EXPECT_EQ(bubble_formula_filled(kind, 4, 8, 1), "(4-1)/(8+4-1) = 0.273");
  }
}

TEST(BubbleFormulaTest, InterleavedDividesTheBubbleByChunks) {
  const ScheduleKind kind = ScheduleKind::Interleaved1F1B;
  EXPECT_DOUBLE_EQ(theoretical_bubble(kind, 4, 8, 2, UnitCosts{}), 3.0 / 19.0);
  EXPECT_EQ(bubble_formula_filled(kind, 4, 8, 2), "(4-1)/(2*8+4-1) = 0.158");
  // m = 6 is one round of 6: still (p-1)/(v*m+p-1).
  EXPECT_DOUBLE_EQ(theoretical_bubble(kind, 4, 6, 2, UnitCosts{}), 3.0 / 15.0);
}

TEST(BubbleFormulaTest, InterleavedWithFewerMicrobatchesThanDevices) {
  const ScheduleKind kind = ScheduleKind::Interleaved1F1B;
  // p = 4, v = 2, m = 2: T = 2*4+2-1 = 9 chunk passes, 4 of them busy.
  EXPECT_DOUBLE_EQ(theoretical_bubble(kind, 4, 2, 2, UnitCosts{}), 5.0 / 9.0);
  // m = 1 is one chain through all v p stages: busy v of v p.
  EXPECT_DOUBLE_EQ(theoretical_bubble(kind, 4, 1, 3, UnitCosts{}), 1 - 3.0 / 12.0);
  EXPECT_EQ(bubble_formula_text(kind), "(p-1)/(v*m+p-1) for m>=p, 1-v*m/(v*p+m-1) for m<p");
  EXPECT_EQ(bubble_formula_filled(kind, 4, 2, 2), "1-2*2/(2*4+2-1) = 0.556");
}

TEST(BubbleFormulaTest, ZeroBubbleH1) {
  const ScheduleKind kind = ScheduleKind::ZeroBubbleH1;
  // f = b = w: a third of 1F1B's idle time, (p-1)/(3m+p-1).
  EXPECT_DOUBLE_EQ(theoretical_bubble(kind, 4, 8, 1, UnitCosts{1, 1, 1, 0, 0}), 3.0 / 27.0);
  // idle (p-1)(f+b-w) = 3 * 4 = 12; busy m(f+b+w) = 8 * 6 = 48.
  EXPECT_DOUBLE_EQ(theoretical_bubble(kind, 4, 8, 1, UnitCosts{2, 3, 1, 0, 0}), 12.0 / 60.0);
  // w > f + b: T = m(f+b+w) + (p-1)b = 40 + 3, not the paper's 0.
  EXPECT_DOUBLE_EQ(theoretical_bubble(kind, 4, 8, 1, UnitCosts{1, 1, 3, 0, 0}), 3.0 / 43.0);
  // m < p, p = 4, m = 2, unit costs: T = 3 + 4 + 3 + 1 = 11 (the last BI chain).
  EXPECT_DOUBLE_EQ(theoretical_bubble(kind, 4, 2, 1, UnitCosts{1, 1, 1, 0, 0}), 1 - 6.0 / 11.0);
  EXPECT_EQ(bubble_formula_filled(kind, 4, 8, 1), "1-8(1+1+1)/27 = 0.111");
  // The filled formula shows the costs it is given.
  EXPECT_EQ(bubble_formula_filled(kind, 4, 8, 1, UnitCosts{2, 3, 1, 0, 0}), "1-8(2+3+1)/60 = 0.200");
}

TEST(BubbleFormulaTest, ZeroBubbleV) {
  const ScheduleKind kind = ScheduleKind::ZeroBubbleV;
  // f = b = w: no bubble in the steady state.
  EXPECT_DOUBLE_EQ(theoretical_bubble(kind, 4, 8, 2, UnitCosts{1, 1, 1, 0, 0}), 0.0);
  // idle (p-1)(f+b-2w) = 3 * 3 = 9; busy m(f+b+w) = 8 * 6 = 48.
  EXPECT_DOUBLE_EQ(theoretical_bubble(kind, 4, 8, 2, UnitCosts{2, 3, 1, 0, 0}), 9.0 / 57.0);
  EXPECT_EQ(bubble_formula_text(kind), "(p-1)(f+b-2w)/(m(f+b+w)+(p-1)(f+b-2w))");
  EXPECT_EQ(bubble_formula_filled(kind, 4, 8, 2),
            "(4-1)(1+1-2*1)/(8(1+1+1)+(4-1)(1+1-2*1)) = 0.000");
}

TEST(BubbleFormulaTest, DualPipeV) {
  const ScheduleKind kind = ScheduleKind::DualPipeV;
  // f = b = w = 1 per chunk: idle (p-1) = 3 beside 2m(f+b+w) = 48 busy.
  EXPECT_DOUBLE_EQ(theoretical_bubble(kind, 4, 8, 2, UnitCosts{1, 1, 1, 0, 0}), 3.0 / 51.0);
  // f = 2, b = 3, w = 1: 3 hops of 2b-w = 5, less min(f, 3(b-f)) = 2: idle 13 beside 96.
  EXPECT_DOUBLE_EQ(theoretical_bubble(kind, 4, 8, 2, UnitCosts{2, 3, 1, 0, 0}), 13.0 / 109.0);
  // f = 4, b = 1, w = 2: hops of 2f-w-b = 5, no saving (b < f): idle 15 beside 112.
  EXPECT_DOUBLE_EQ(theoretical_bubble(kind, 4, 8, 2, UnitCosts{4, 1, 2, 0, 0}), 15.0 / 127.0);
  EXPECT_DOUBLE_EQ(theoretical_bubble(kind, 1, 2, 2, UnitCosts{1, 1, 1, 0, 0}), 0.0);
  EXPECT_EQ(bubble_formula_filled(kind, 4, 8, 2), "3/(2*8(1+1+1)+3) = 0.059");
}

TEST(BubbleFormulaTest, AsynchronousSchedulesHaveNoSteadyStateBubble) {
  for (ScheduleKind kind : {ScheduleKind::PipeDream, ScheduleKind::PipeDream2BW}) {
    EXPECT_DOUBLE_EQ(theoretical_bubble(kind, 4, 8, 1, UnitCosts{}), 0.0);
    EXPECT_EQ(bubble_formula_text(kind), "0 (steady state)");
  }
}

TEST(BubbleFormulaTest, RejectsCountsBelowOne) {
  EXPECT_THROW(theoretical_bubble(ScheduleKind::GPipe, 0, 8, 1, UnitCosts{}),
               std::invalid_argument);
  EXPECT_THROW(theoretical_bubble(ScheduleKind::GPipe, 4, 0, 1, UnitCosts{}),
               std::invalid_argument);
  EXPECT_THROW(theoretical_bubble(ScheduleKind::Interleaved1F1B, 4, 8, 0, UnitCosts{}),
               std::invalid_argument);
}

}  // namespace
}  // namespace pipelab
