// The device-to-device path's steps (gpu/comm/collective_steps.h), run here on
// host vectors: each collective's layout, and the same bits as the CPU
// backend's all-to-all and ring reduce-scatter / all-gather (the collectives
// the moe layer and sequence parallelism call on the CPU). Needs no GPU.
#include "gpu/comm/collective_steps.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <thread>
#include <vector>

#include "tests/support/test_ring.h"
#include "core/comm/all_to_all.h"
#include "core/comm/ring_allreduce.h"
#include "tests/gpu/gpu_test_support.h"

namespace pipelab::gpu {
namespace {

using Values = std::vector<std::vector<float>>;  // per member

// What a stream running the steps does, on host vectors.
void run_on_host(const CollectiveSteps& plan, Values& members) {
  std::vector<float> scratch(static_cast<size_t>(plan.scratch_values), 0.0f);
  const auto at = [&](int member, int64_t offset) {
    return (member == CollectiveStep::kScratch ? scratch.data() : members[member].data()) + offset;
  };
  for (const CollectiveStep& step : plan.steps) {
    ASSERT_TRUE(step.kind == CollectiveStep::Kind::Copy || step.to == CollectiveStep::kScratch)
        << "an addition's target is the scratch (on the stream's GPU)";
    const float* from = at(step.from, step.from_offset);
    float* to = at(step.to, step.to_offset);
    for (int64_t i = 0; i < step.count; ++i)
      to[i] = step.kind == CollectiveStep::Kind::Copy ? from[i] : to[i] + from[i];
  }
}

Values random_members(int members, int64_t values, uint64_t seed) {
  Values all;
  for (int m = 0; m < members; ++m) all.push_back(testing::random_values(values, seed + m));
  return all;
}

// One member's part of a CPU backend collective.
using CpuCollective = void (*)(std::span<float> values, const RingGroup& group, int64_t collective);

// `collective` on host copies of random values: by its steps, and by the CPU
// backend's `on_cpu` over threads and an in-process transport.
struct Compared {
  Values before, on_gpu, on_cpu;
};
// Each member holds `values` floats, or members x `slice` when `values` is 0.
Compared compare(GroupCollective collective, CpuCollective on_cpu, int members, int64_t slice,
                 uint64_t seed, int64_t values = 0) {
  if (values == 0) values = slice * members;
  Compared result;
  result.before = random_members(members, values, seed);
  result.on_gpu = result.on_cpu = result.before;
  run_on_host(collective_steps(collective, members, values), result.on_gpu);
  pipelab::testing::TestRing ring(members);
  std::vector<std::thread> threads;
  for (int d = 0; d < members; ++d)
    threads.emplace_back(
        [&, d] { on_cpu(result.on_cpu[static_cast<size_t>(d)], ring.group(d), 0); });
  for (std::thread& thread : threads) thread.join();
  return result;
}

TEST(CollectiveSteps, AllToAllSwapsSlicesAsTheCpuDoes) {
  for (int members : {1, 2, 3, 4}) {
    const int64_t slice = 5;
    const Compared run = compare(GroupCollective::AllToAll, all_to_all, members, slice, 10);
    EXPECT_EQ(run.on_gpu, run.on_cpu) << members << " members";
    for (int r = 0; r < members; ++r)
      for (int j = 0; j < members; ++j)
        EXPECT_EQ(run.on_gpu[j][r * slice + 2], run.before[r][j * slice + 2])
            << "member " << r << "'s slice " << j;
  }
}

TEST(CollectiveSteps, ReduceScatterAddsInTheCpuRingsOrder) {
  for (int members : {1, 2, 3, 4}) {
    const int64_t slice = 251;  // enough that another order of additions changes some bits
    const Compared run =
        compare(GroupCollective::ReduceScatter, ring_reduce_scatter, members, slice, 20);
    for (int r = 0; r < members; ++r)
      for (int64_t i = r * slice; i < (r + 1) * slice; ++i) {
        EXPECT_EQ(run.on_gpu[r][i], run.on_cpu[r][i])
            << "member " << r << ", value " << i << ": the same bits";
        float sum = 0;
        for (int m = 0; m < members; ++m) sum += run.before[m][i];
        EXPECT_FLOAT_EQ(run.on_gpu[r][i], sum);
      }
  }
}

TEST(CollectiveSteps, AllGatherFillsEverySliceFromItsMember) {
  for (int members : {1, 2, 3}) {
    const int64_t slice = 4;
    const Compared run = compare(GroupCollective::AllGather, ring_all_gather, members, slice, 30);
    EXPECT_EQ(run.on_gpu, run.on_cpu) << members << " members";
    for (int j = 0; j < members; ++j)
      for (int r = 0; r < members; ++r)
        EXPECT_EQ(run.on_gpu[j][r * slice], run.before[r][r * slice]);
  }
}

TEST(CollectiveSteps, AllReduceAddsInTheCpuRingsOrder) {
  for (int members : {1, 2, 3, 4}) {
    // 1001 values over 3 or 4 members: uneven chunks (333 and 334, or 250 and
    // 251); enough of them that another order of additions changes some bits.
    const Compared run = compare(GroupCollective::AllReduce, ring_all_reduce, members, 0, 40, 1001);
    EXPECT_EQ(run.on_gpu, run.on_cpu) << members << " members: the same bits";
    for (int m = 0; m < members; ++m)
      for (size_t i = 0; i < 1001; ++i) {
        float sum = 0;
        for (int k = 0; k < members; ++k) sum += run.before[k][i];
        EXPECT_FLOAT_EQ(run.on_gpu[m][i], sum);
      }
  }
}

TEST(CollectiveSteps, RefusesSlicesThatDoNotDivide) {
  EXPECT_THROW(collective_steps(GroupCollective::AllToAll, 3, 10), std::invalid_argument);
  EXPECT_THROW(collective_steps(GroupCollective::ReduceScatter, 4, 6), std::invalid_argument);
  EXPECT_THROW(collective_steps(GroupCollective::AllReduce, 0, 6), std::invalid_argument);
  EXPECT_NO_THROW(collective_steps(GroupCollective::AllReduce, 3, 10));  // no slices
}

}  // namespace
}  // namespace pipelab::gpu
