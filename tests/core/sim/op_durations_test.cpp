// A compute op's own time leaves out the communication nested inside it.
#include "core/sim/op_durations.h"

#include <gtest/gtest.h>

namespace pipelab {
namespace {

TEST(OwnDurations, ComputeOpsExcludeTheAllReducesNestedInThem) {
  Trace trace;
  Op forward;
  forward.kind = OpKind::Forward;
  Op reduce;
  reduce.kind = OpKind::AllReduce;
  reduce.group = CommGroup::TensorParallel;
  trace.events.push_back({0, reduce, 1.0, 1.5, 64});
  trace.events.push_back({0, forward, 0.5, 3.0, 0});
  trace.events.push_back({1, forward, 0.5, 3.0, 0});  // another device: nothing nested
  const std::vector<double> own = own_durations(trace);
  EXPECT_DOUBLE_EQ(own[0], 0.5);
  EXPECT_DOUBLE_EQ(own[1], 2.0);
  EXPECT_DOUBLE_EQ(own[2], 2.5);
}

}  // namespace
}  // namespace pipelab
