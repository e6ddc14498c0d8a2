// RankWorld's non-blocking NCCL set-up (gpu/comm/rank_world.h) on one GPU:
// a world of one rank sets up and all-reduces, and a world of two whose
// second rank never comes ends within its timeout, naming the step, instead
// of hanging. Two ranks that both come need two GPUs (MpiNcclRun). Skipped
// without a GPU.
#include <gtest/gtest.h>

#include <chrono>
#include <stdexcept>
#include <string>
#include <vector>

#include "gpu/comm/rank_world.h"
#include "gpu/layers/device_context.h"
#include "tests/gpu/gpu_test_support.h"

namespace pipelab::gpu {
namespace {

#ifdef PIPELAB_HAVE_NCCL

using Clock = std::chrono::steady_clock;

SetupWait setup_of(double timeout_s, std::function<bool()> stopping = nullptr) {
  SetupWait wait;
  wait.rank = 0;
  wait.timeout = std::chrono::duration<double>(timeout_s);
  wait.stopping = std::move(stopping);
  return wait;
}

// A plan of one communicator over `ranks` process ranks, device d on rank d.
RankCommPlan plan_over(int ranks) {
  RankCommPlan plan;
  RankCommunicator communicator;
  for (int rank = 0; rank < ranks; ++rank) {
    communicator.ranks.push_back(rank);
    communicator.devices.push_back(rank);
  }
  // Every kind, so that the set-up warms each one up.
  communicator.collectives = {GroupCollective::AllReduce, GroupCollective::ReduceScatter,
                              GroupCollective::AllGather, GroupCollective::AllToAll};
  plan.communicators.push_back(communicator);
  return plan;
}

TEST(RankWorldTest, AWorldOfOneRankSetsUpAndAllReduces) {
  PIPELAB_REQUIRE_GPU();
  const RankCommPlan plan = plan_over(1);
  const RankWorld world(plan, 0, 1, 0, [](const std::string& mine) {
    return std::vector<std::string>{mine};
  }, setup_of(30));
  EXPECT_EQ(world.communicators(), 2);  // the world and the split
  EXPECT_EQ(world.communicators(), communicators_on_rank(plan, 0));
  DeviceContext context(0);
  const std::vector<float> values = testing::random_values(96, 7);
  DeviceTensor tensor = DeviceTensor::from_values(8, 12, values, &context.allocator());
  world.all_reduce_sum(0, tensor, context.stream());
  EXPECT_EQ(tensor.to_vector(), values);  // a sum over one rank
  EXPECT_NO_THROW(world.check_async_errors());
}

TEST(RankWorldTest, ARankThatNeverComesEndsTheSetUpWithinItsTimeout) {
  PIPELAB_REQUIRE_GPU();
  const RankCommPlan plan = plan_over(2);
  const auto begin = Clock::now();
  try {
    // Rank 1 never calls ncclCommInitRank: blocking, this would hang.
    const RankWorld world(plan, 0, 2, 0, [](const std::string& mine) {
      return std::vector<std::string>{mine, ""};
    }, setup_of(2));
    FAIL() << "the set-up finished without rank 1";
  } catch (const std::runtime_error& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("rank 0: NCCL's set-up between ranks (ncclCommInitRank over 2 ranks) "
                           "did not finish within 2 s"),
              std::string::npos)
        << message;
  }
  EXPECT_LT(std::chrono::duration<double>(Clock::now() - begin).count(), 20.0)
      << "the abort of the unfinished communicator took too long";
}

TEST(RankWorldTest, AStopEndsTheSetUpSayingSo) {
  PIPELAB_REQUIRE_GPU();
  const RankCommPlan plan = plan_over(2);
  try {
    const RankWorld world(plan, 0, 2, 0, [](const std::string& mine) {
      return std::vector<std::string>{mine, ""};
    }, setup_of(60, [] { return true; }));
    FAIL() << "the set-up finished without rank 1";
  } catch (const std::runtime_error& error) {
    EXPECT_NE(std::string(error.what()).find("the run was stopped during NCCL's set-up"),
              std::string::npos)
        << error.what();
  }
}

#else

TEST(RankWorldTest, NeedsNccl) { GTEST_SKIP() << "this build has no NCCL"; }

#endif

}  // namespace
}  // namespace pipelab::gpu
