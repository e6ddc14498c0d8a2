// DeviceGroup's collectives (gpu/comm/device_group.h) on the GPU, against
// expectations computed on the host: virtual devices sharing a GPU take the
// device-to-device path (the same bits as the CPU backend's collectives);
// members on two GPUs use NCCL; four members on two GPUs take the copy path
// with peer copies. Each member runs on its own thread, as the executor's
// workers do, and calls the same collectives in the same order.
#include "gpu/comm/device_group.h"

#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <vector>

#include "gpu/device/cuda_check.h"
#include "tests/gpu/gpu_test_support.h"

namespace pipelab::gpu {
namespace {

using Values = std::vector<std::vector<float>>;  // per member

// Virtual devices on `gpus` (one per member) and the group over them.
class TestGroup {
 public:
  explicit TestGroup(const std::vector<int>& gpus)
      : control_(static_cast<int>(gpus.size())), world_(gpus) {
    std::vector<VirtualDevice*> members;
    for (size_t m = 0; m < gpus.size(); ++m) {
      devices_.push_back(std::make_unique<VirtualDevice>(static_cast<int>(m), gpus[m],
                                                         GemmPrecision::Fp32, control_));
      members.push_back(devices_.back().get());
    }
    group_ = std::make_unique<DeviceGroup>(members, control_, world_);
  }
  DeviceGroup& group() { return *group_; }

  // Every member runs `collectives` in order on its `values`, on its own
  // thread; returns what each member holds afterwards.
  Values run(const std::vector<GroupCollective>& collectives, const Values& values) {
    Values after(values.size());
    const auto member = [&](int index) {
      const size_t m = static_cast<size_t>(index);
      VirtualDevice& device = *devices_[m];
      PIPELAB_CUDA_CHECK(cudaSetDevice(device.gpu));
      const int64_t count = static_cast<int64_t>(values[m].size());
      DeviceTensor tensor = DeviceTensor::from_values(1, count, values[m], &device.allocator(),
                                                      MemoryCategory::Workspace);
      const int rank = static_cast<int>(m);
      for (GroupCollective collective : collectives) switch (collective) {
          case GroupCollective::AllReduce:
            group_->all_reduce(rank, tensor);
            break;
          case GroupCollective::AllToAll:
            group_->all_to_all(rank, tensor);
            break;
          case GroupCollective::AllGather:
            group_->all_gather(rank, tensor);
            break;
          case GroupCollective::ReduceScatter:
            group_->reduce_scatter(rank, tensor);
            break;
        }
      after[m] = tensor.to_vector();  // waits for the compute stream
    };
    // A member that throws stops the run, so the others leave the collective
    // they wait in (and every later one throws at once).
    testing::run_on_threads(static_cast<int>(devices_.size()), member, [&](int, bool threw) {
      if (threw) control_.stop();
    });
    // A member that threw holds NaNs, which every check below refuses.
    for (size_t m = 0; m < after.size(); ++m)
      if (after[m].size() != values[m].size()) after[m].assign(values[m].size(), std::nanf(""));
    return after;
  }

 private:
  RunControl control_;
  CommWorld world_;
  std::vector<std::unique_ptr<VirtualDevice>> devices_;
  std::unique_ptr<DeviceGroup> group_;
};

Values random_members(int members, int64_t values, uint64_t seed) {
  Values all;
  for (int m = 0; m < members; ++m) all.push_back(testing::random_values(values, seed + m));
  return all;
}

// Each collective once, from fresh values, against its definition. `exact`:
// sums in the copy path's order, which is the CPU ring's (collective_steps.h;
// the values are n x slice, so the ring's chunks are the slices).
void expect_collectives(const std::vector<int>& gpus, bool exact) {
  const int n = static_cast<int>(gpus.size());
  const int64_t slice = 257;  // odd: no slice boundary is aligned by luck
  const Values before = random_members(n, slice * n, 50);
  TestGroup test(gpus);
  ASSERT_EQ(test.group().size(), n);

  const Values swapped = test.run({GroupCollective::AllToAll}, before);
  for (int r = 0; r < n; ++r)
    for (int j = 0; j < n; ++j)
      for (int64_t i = 0; i < slice; ++i)
        ASSERT_EQ(swapped[j][r * slice + i], before[r][j * slice + i])
            << "all-to-all: member " << r << "'s slice " << j << ", value " << i;
  // Twice gives the values back (the moe layer's combine undoes its dispatch).
  EXPECT_EQ(test.run({GroupCollective::AllToAll, GroupCollective::AllToAll}, before), before);

  const Values gathered = test.run({GroupCollective::AllGather}, before);
  for (int j = 0; j < n; ++j)
    for (int r = 0; r < n; ++r)
      for (int64_t i = 0; i < slice; ++i)
        ASSERT_EQ(gathered[j][r * slice + i], before[r][r * slice + i])
            << "all-gather: member " << j << "'s slice " << r;

  const Values scattered = test.run({GroupCollective::ReduceScatter}, before);
  for (int r = 0; r < n; ++r)
    for (int64_t i = r * slice; i < (r + 1) * slice; ++i) {
      float sum = before[(r + 1) % n][i];  // the CPU ring's order
      for (int k = 2; k <= n; ++k) sum += before[(r + k) % n][i];
      if (exact)
        ASSERT_EQ(scattered[r][i], sum) << "reduce-scatter: member " << r << ", value " << i;
      else
        ASSERT_NEAR(scattered[r][i], sum, 1e-5)
            << "reduce-scatter: member " << r << ", value " << i;
    }

  const Values reduced = test.run({GroupCollective::AllReduce}, before);
  for (int m = 0; m < n; ++m) {
    EXPECT_EQ(reduced[m], reduced[0]) << "all-reduce: the same bits on every member";
    for (size_t i = 0; i < before[0].size(); ++i) {
      // The CPU ring's order: chunk c (of n, value i's) from member c round.
      const int c = static_cast<int>(i / static_cast<size_t>(slice));
      float sum = before[c][i];
      for (int k = 1; k < n; ++k) sum += before[(c + k) % n][i];
      if (exact)
        ASSERT_EQ(reduced[m][i], sum) << "all-reduce: member " << m << ", value " << i;
      else
        ASSERT_NEAR(reduced[m][i], sum, 1e-5) << "all-reduce: member " << m << ", value " << i;
    }
  }
}

TEST(DeviceGroupTest, MembersSharingAGpuCopyOnTheDevice) {
  PIPELAB_REQUIRE_GPU();
  for (int members : {2, 3, 4}) {
    SCOPED_TRACE(std::to_string(members) + " members on GPU 0");
    expect_collectives(std::vector<int>(static_cast<size_t>(members), 0), true);
  }
  EXPECT_FALSE(TestGroup({0, 0}).group().uses_nccl());
}

TEST(DeviceGroupTest, MembersOnTwoGpusUseNccl) {
  PIPELAB_REQUIRE_GPUS(2);
  TestGroup pair({0, 1});
  EXPECT_EQ(pair.group().uses_nccl(), kHaveNccl);
  expect_collectives({0, 1}, !kHaveNccl);
}

TEST(DeviceGroupTest, FourMembersOnTwoGpusCopyBetweenThem) {
  PIPELAB_REQUIRE_GPUS(2);
  EXPECT_FALSE(TestGroup({0, 0, 1, 1}).group().uses_nccl());
  expect_collectives({0, 0, 1, 1}, true);
}

TEST(DeviceGroupTest, AGroupOfOneLeavesTheValuesAlone) {
  PIPELAB_REQUIRE_GPU();
  TestGroup alone({0});
  const Values values = random_members(1, 12, 60);
  EXPECT_EQ(alone.run({GroupCollective::AllToAll, GroupCollective::ReduceScatter,
                       GroupCollective::AllGather, GroupCollective::AllReduce},
                      values),
            values);
}

}  // namespace
}  // namespace pipelab::gpu
