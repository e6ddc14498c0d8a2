// How RankWorld waits for NCCL's non-blocking set-up between ranks
// (gpu/comm/setup_wait.h): host decisions, checked without NCCL or a GPU.
#include <gtest/gtest.h>

#include <atomic>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>

#include "core/comm/run_control.h"
#include "gpu/comm/setup_wait.h"

namespace pipelab::gpu {
namespace {

using namespace std::chrono_literals;

SetupWait wait_of(int rank, std::optional<std::chrono::duration<double>> timeout,
                  std::function<bool()> stopping = nullptr) {
  SetupWait wait;
  wait.rank = rank;
  wait.timeout = timeout;
  wait.stopping = std::move(stopping);
  return wait;
}

TEST(SetupWaitTest, ReturnsOnceTheCommunicatorIsReady) {
  int polls = 0;
  const SetupWait wait = wait_of(1, 5s);
  wait.until_ready([&] { return ++polls == 3; }, "ncclCommInitRank");
  EXPECT_EQ(polls, 3);
}

TEST(SetupWaitTest, ATimeoutNamesTheRankAndTheStep) {
  const SetupWait wait = wait_of(2, 50ms);
  try {
    wait.until_ready([] { return false; }, "ncclCommSplit of communicator 3");
    FAIL() << "no timeout";
  } catch (const std::runtime_error& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("rank 2: ncclCommSplit of communicator 3 did not finish within 0.05 s"),
              std::string::npos)
        << message;
    EXPECT_NE(message.find("another rank died"), std::string::npos) << message;
  }
}

TEST(SetupWaitTest, AStopEndsTheWaitWithoutATimeout) {
  int polls = 0;
  const SetupWait wait = wait_of(0, std::nullopt, [&] { return polls >= 2; });
  EXPECT_THROW(wait.until_ready([&] { return ++polls > 100; }, "ncclAllReduce"), RunStopped);
  EXPECT_EQ(polls, 2);
}

TEST(SetupWaitTest, AnErrorFromThePollPassesThrough) {
  const SetupWait wait = wait_of(0, 5s);
  EXPECT_THROW(wait.until_ready([]() -> bool { throw std::runtime_error("NCCL remote error"); },
                                "ncclCommInitRank"),
               std::runtime_error);
}

TEST(SetupWaitTest, ReadyAtTheFirstPollNeverConsultsTheStopFlag) {
  std::atomic<int> asked{0};
  const SetupWait wait = wait_of(0, std::nullopt, [&] { return ++asked > 0; });
  wait.until_ready([] { return true; }, "ncclSend");
  EXPECT_EQ(asked, 0);
}

}  // namespace
}  // namespace pipelab::gpu
