// Communication: the same-GPU fallback between virtual devices, and NCCL
// between two GPUs (skipped without a GPU, or with fewer than two for NCCL).
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <thread>
#include <vector>

#include "gpu/comm/comm_world.h"
#include "gpu/comm/same_gpu_comm.h"
#include "gpu/layers/device_context.h"
#include "gpu/device/device_query.h"
#include "tests/gpu/gpu_test_support.h"

namespace pipelab::gpu {
namespace {

// Three virtual devices on GPU 0 sum their tensors; each gets the same total.
TEST(SameGpuCommTest, AllReduceSumsIntoEveryParticipant) {
  PIPELAB_REQUIRE_GPU();
  std::vector<std::unique_ptr<DeviceContext>> contexts;
  std::vector<DeviceTensor> tensors;
  std::vector<float> expected(65 * 33, 0.0f);
  for (int i = 0; i < 3; ++i) {
    contexts.push_back(std::make_unique<DeviceContext>(0));
    const std::vector<float> values = testing::random_values(65 * 33, 70 + i);
    for (size_t k = 0; k < values.size(); ++k) expected[k] += values[k];
    tensors.push_back(DeviceTensor::from_values(65, 33, values, &contexts[i]->allocator(),
                                                MemoryCategory::Gradients));
  }
  std::vector<DeviceTensor*> participants = {&tensors[0], &tensors[1], &tensors[2]};
  all_reduce_sum_local(participants);
  // Summed in participant order on the first stream, as `expected` was.
  for (int i = 0; i < 3; ++i) EXPECT_EQ(tensors[i].to_vector(), expected) << "participant " << i;
  // Nothing is left behind in the accounting (no CommBuffers on one GPU).
  for (auto& context : contexts)
    EXPECT_EQ(context->allocator().current()[static_cast<int>(MemoryCategory::CommBuffers)], 0);
  tensors.clear();
}

TEST(SameGpuCommTest, CopyBetweenVirtualDevicesIsASend) {
  PIPELAB_REQUIRE_GPU();
  DeviceContext sender(0), receiver(0);
  const std::vector<float> values = testing::random_values(100, 71);
  const DeviceTensor sent = DeviceTensor::from_values(10, 10, values, &sender.allocator());
  DeviceTensor received(10, 10, &receiver.allocator(), MemoryCategory::CommBuffers);
  copy_between(sent, received);
  EXPECT_EQ(received.to_vector(), values);
}

TEST(SameGpuCommTest, AllReduceAcrossTwoGpusWithoutNccl) {
  PIPELAB_REQUIRE_GPUS(2);
  DeviceContext first(0), second(1);
  const std::vector<float> a = testing::random_values(300, 72), b = testing::random_values(300, 73);
  DeviceTensor ta = DeviceTensor::from_values(3, 100, a, &first.allocator());
  DeviceTensor tb = DeviceTensor::from_values(3, 100, b, &second.allocator());
  std::vector<DeviceTensor*> participants = {&ta, &tb};
  all_reduce_sum_local(participants);
  std::vector<float> expected(300);
  for (size_t k = 0; k < expected.size(); ++k) expected[k] = a[k] + b[k];
  EXPECT_EQ(ta.to_vector(), expected);
  EXPECT_EQ(tb.to_vector(), expected);
}

#ifdef PIPELAB_HAVE_NCCL

// An all-reduce of a two-rank group from one thread: each rank gets a + b.
void expect_all_reduce_sums(const NcclGroup& group, DeviceContext& rank0, DeviceContext& rank1,
                            uint64_t seed) {
  const std::vector<float> a = testing::random_values(1000, seed),
                           b = testing::random_values(1000, seed + 1);
  DeviceTensor ta = DeviceTensor::from_values(10, 100, a, &rank0.allocator());
  DeviceTensor tb = DeviceTensor::from_values(10, 100, b, &rank1.allocator());
  std::vector<DeviceTensor*> tensors = {&ta, &tb};
  std::vector<cudaStream_t> streams = {rank0.stream(), rank1.stream()};
  group.all_reduce_sum_all(tensors, streams);
  std::vector<float> expected(1000);
  for (size_t k = 0; k < expected.size(); ++k) expected[k] = a[k] + b[k];
  EXPECT_EQ(ta.to_vector(), expected);
  EXPECT_EQ(tb.to_vector(), expected);
}

TEST(NcclCommTest, RefusesTwoRanksOnOneGpu) {
  // Checked before NCCL is called, so this needs no GPU.
  EXPECT_THROW(NcclGroup({0, 0}), std::invalid_argument);
  EXPECT_THROW(NcclGroup(std::vector<int>{}), std::invalid_argument);
}

TEST(NcclCommTest, AllReduceAndSendRecvBetweenTwoGpus) {
  PIPELAB_REQUIRE_GPUS(2);
  DeviceContext first(0), second(1);
  DeviceContext* contexts[2] = {&first, &second};
  NcclGroup group({0, 1});
  ASSERT_EQ(group.size(), 2);

  // All-reduce from one thread (grouped).
  expect_all_reduce_sums(group, first, second, 80);

  // Each rank driven by its own thread: an exchange (both send and receive at
  // once, grouped), then an all-reduce.
  std::vector<float> received[2], reduced[2];
  std::vector<std::thread> threads;
  for (int rank = 0; rank < 2; ++rank) {
    threads.emplace_back([&, rank] {
      DeviceContext& context = *contexts[rank];
      context.make_current();
      const std::vector<float> mine = testing::random_values(64, 90 + rank);
      DeviceTensor outgoing = DeviceTensor::from_values(8, 8, mine, &context.allocator());
      DeviceTensor incoming(8, 8, &context.allocator(), MemoryCategory::CommBuffers);
      const NcclTransfer transfers[2] = {{NcclTransfer::Kind::Send, &outgoing, 1 - rank},
                                         {NcclTransfer::Kind::Recv, &incoming, 1 - rank}};
      group.send_recv(rank, transfers, context.stream());
      received[rank] = incoming.to_vector();
      group.all_reduce_sum(rank, outgoing, context.stream());
      reduced[rank] = outgoing.to_vector();
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(received[0], testing::random_values(64, 91));
  EXPECT_EQ(received[1], testing::random_values(64, 90));
  std::vector<float> sum = testing::random_values(64, 90);
  const std::vector<float> other = testing::random_values(64, 91);
  for (size_t k = 0; k < sum.size(); ++k) sum[k] += other[k];
  EXPECT_EQ(reduced[0], sum);
  EXPECT_EQ(reduced[1], sum);
}

TEST(NcclCommTest, GroupsAreSplitFromOneWorldAndCachedPerGpuSet) {
  PIPELAB_REQUIRE_GPUS(2);
  CommWorld world({1, 0});
  const NcclGroup& pair = world.group({1, 0});
  EXPECT_EQ(&world.group({0, 1}), &pair);  // one communicator per GPU set
  EXPECT_EQ(world.communicators(), 1);     // both GPUs: the world itself
  EXPECT_EQ(pair.rank_of(0), 0);
  EXPECT_EQ(pair.rank_of(1), 1);
  EXPECT_EQ(pair.rank_of(7), -1);
  EXPECT_THROW(world.group({0, 7}), std::invalid_argument);
}

TEST(NcclCommTest, ASplitGroupSumsOverItsGpusOnly) {
  PIPELAB_REQUIRE_GPUS(3);
  const NcclGroup world({0, 1, 2});
  const NcclGroup split(world, {2, 0});  // ranks in the order given
  ASSERT_EQ(split.size(), 2);
  EXPECT_EQ(split.rank_of(2), 0);
  EXPECT_EQ(split.rank_of(0), 1);
  DeviceContext on_2(2), on_0(0);
  expect_all_reduce_sums(split, on_2, on_0, 82);
  EXPECT_THROW(NcclGroup(world, {0, 5}), std::invalid_argument);
}

TEST(NcclCommTest, AbortReleasesAStreamWaitingForAPeerThatNeverSends) {
  PIPELAB_REQUIRE_GPUS(2);
  DeviceContext first(0), second(1);
  NcclGroup group({0, 1});
  DeviceTensor outgoing(8, 8, &first.allocator()), incoming(8, 8, &second.allocator());
  // One full transfer first, so the connection exists and the lone receive
  // below only waits on the GPU, not in its launch.
  group.transfer(0, outgoing, first.stream(), 1, incoming, second.stream());
  second.synchronize();
  group.recv(1, incoming, 0, second.stream());  // no send will ever match it
  group.abort();
  // The receive's kernel gave up: the stream drains instead of hanging
  // (returning at all is the check; what the abandoned kernel left is moot).
  (void)cudaStreamSynchronize(second.stream());
  (void)cudaGetLastError();
  EXPECT_TRUE(group.aborted());
}

#endif  // PIPELAB_HAVE_NCCL

// Runs without a GPU: the inventory says why there is none.
TEST(DeviceQueryTest, ReportsGpusOrWhyThereAreNone) {
  const GpuInventory inventory = query_gpus();
  if (inventory.gpus.empty()) {
    EXPECT_FALSE(inventory.unavailable_reason.empty());
  } else {
    EXPECT_TRUE(inventory.unavailable_reason.empty());
    EXPECT_GT(inventory.gpus[0].total_bytes, 0);
  }
#ifdef PIPELAB_HAVE_NCCL
  EXPECT_TRUE(inventory.nccl_available);
#endif
}

// A rank of a run over processes lists the GPUs without reading their free
// bytes, which would make a CUDA context on each (device_query.h).
TEST(DeviceQueryTest, WithoutFreeBytesListsTheSameGpusAndReadsNone) {
  const GpuInventory with = query_gpus();
  const GpuInventory without = query_gpus(/*read_free_bytes=*/false);
  EXPECT_EQ(without.unavailable_reason, with.unavailable_reason);
  ASSERT_EQ(without.gpus.size(), with.gpus.size());
  for (size_t i = 0; i < with.gpus.size(); ++i) {
    EXPECT_EQ(without.gpus[i].index, with.gpus[i].index);
    EXPECT_EQ(without.gpus[i].name, with.gpus[i].name);
    EXPECT_EQ(without.gpus[i].total_bytes, with.gpus[i].total_bytes);
    EXPECT_EQ(without.gpus[i].free_bytes, 0);
  }
}

}  // namespace
}  // namespace pipelab::gpu
