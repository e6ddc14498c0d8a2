// run_on_threads (gpu_test_support.h), the multi-shard tests' threads: a
// thread that throws or returns early fails the test and releases the threads
// waiting for it, instead of ending the test program or hanging. Needs no GPU.
#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include <barrier>
#include <stdexcept>
#include <vector>

#include "gpu_test_support.h"

namespace pipelab::gpu {
namespace {

TEST(RunOnThreadsTest, AThreadThatThrowsFailsTheTestAndItsPartnerGoesOn) {
  std::barrier<> barrier(2);
  std::vector<int> ended(2, 0);
  EXPECT_NONFATAL_FAILURE(testing::run_on_threads(
                              2,
                              [&](int k) {
                                if (k == 0) throw std::runtime_error("shard 0 broke");
                                barrier.arrive_and_wait();  // waits for shard 0, which never comes
                              },
                              [&](int k, bool threw) {
                                ended[static_cast<size_t>(k)] = threw ? 2 : 1;
                                barrier.arrive_and_drop();
                              }),
                          "thread 0 threw: shard 0 broke");
  EXPECT_EQ(ended, (std::vector<int>{2, 1}));
}

TEST(RunOnThreadsTest, EveryThreadRunsOnceAndEnds) {
  std::vector<int> ran(3, 0), ended(3, 0);
  testing::run_on_threads(
      3, [&](int k) { ++ran[static_cast<size_t>(k)]; },
      [&](int k, bool threw) { ended[static_cast<size_t>(k)] = threw ? 2 : 1; });
  EXPECT_EQ(ran, (std::vector<int>{1, 1, 1}));
  EXPECT_EQ(ended, (std::vector<int>{1, 1, 1}));
}

}  // namespace
}  // namespace pipelab::gpu
