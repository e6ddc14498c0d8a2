// The memory check of a CUDA run over processes: ranks that share a GPU sum
// their virtual devices on it, and every rank decides alike. Host arithmetic,
// checked without a GPU or MPI.
#include "gpu/executor/rank_memory_check.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>

#include "core/io/hardware_catalogue.h"
#include "gpu/executor/device_mapping.h"
#include "gpu/memory/out_of_memory.h"
#include "tests/gpu/gpu_test_support.h"

namespace pipelab::gpu {
namespace {

constexpr int64_t kGiB = int64_t{1} << 30;

// Rank `rank` of a run with `per_rank` devices per rank, each estimated at
// `device_bytes`, on the GPU called `gpu` with `free_bytes` free.
RankGpuReport report(int rank, const std::string& gpu, int64_t free_bytes, int per_rank,
                     int64_t device_bytes, int64_t nccl_bytes = 0) {
  RankGpuReport made;
  made.rank = rank;
  made.gpu = gpu;
  made.free_bytes = free_bytes;
  made.first_device = rank * per_rank;
  made.device_bytes.assign(static_cast<size_t>(per_rank), device_bytes);
  made.nccl_bytes = nccl_bytes;
  return made;
}

// `ranks` ranks on one machine with `gpus` GPUs, each rank on the GPU of its
// local rank (device_mapping.h: local rank modulo the GPUs).
std::vector<RankGpuReport> ranks_on_one_machine(int ranks, int gpus, int64_t free_bytes,
                                                int per_rank, int64_t device_bytes) {
  std::vector<RankGpuReport> reports;
  for (int rank = 0; rank < ranks; ++rank) {
    const int gpu = gpu_for_local_rank(rank, gpus);
    reports.push_back(report(rank, "node1/0000:0" + std::to_string(gpu) + ":00.0", free_bytes,
                             per_rank, device_bytes));
    reports.back().cuda_device = gpu;
  }
  return reports;
}

TEST(RankMemoryCheckTest, TwoRanksOnOneGpuThatEachFitAloneAreRefusedTogether) {
  const std::vector<RankGpuReport> reports = ranks_on_one_machine(2, 1, 60 * kGiB, 2, 20 * kGiB);
  for (const RankGpuReport& alone : reports)
    EXPECT_TRUE(find_rank_memory_shortfalls({alone}).empty()) << "rank " << alone.rank;

  const std::vector<RankGpuShortfall> shortfalls = find_rank_memory_shortfalls(reports);
  ASSERT_EQ(shortfalls.size(), 1u);
  EXPECT_EQ(shortfalls[0].ranks, (std::vector<int>{0, 1}));
  EXPECT_EQ(shortfalls[0].bytes.devices, (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(shortfalls[0].bytes.needed_bytes, 80 * kGiB);
  EXPECT_EQ(shortfalls[0].bytes.free_bytes, 60 * kGiB);

  const std::string message = rank_memory_shortfall_message(shortfalls, reports);
  EXPECT_EQ(message.rfind(kMemoryShortfallStart, 0), 0u) << message;
  EXPECT_NE(message.find("GPU node1/0000:00:00.0, shared by rank 0 (virtual devices 0-1, 40.0 "
                         "GiB) and rank 1 (virtual devices 2-3, 40.0 GiB), needs 80.0 GiB but has "
                         "60.0 GiB free; use fewer ranks per GPU"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("parallel.recompute = true"), std::string::npos) << message;
  EXPECT_NE(message.find("parallel.offload = activations"), std::string::npos) << message;
  // More stages would stay on the same GPU: not offered.
  EXPECT_EQ(message.find("parallel.pp"), std::string::npos) << message;
  EXPECT_EQ(message.find('\n'), std::string::npos);  // one line
}

TEST(RankMemoryCheckTest, FourRanksOnTwoGpusSumTheRanksOfEachGpu) {
  // Local ranks 0 and 2 on GPU 0, 1 and 3 on GPU 1; a device of 30 GiB each.
  std::vector<RankGpuReport> reports = ranks_on_one_machine(4, 2, 70 * kGiB, 1, 30 * kGiB);
  EXPECT_TRUE(find_rank_memory_shortfalls(reports).empty());  // 60 of 70 GiB on each

  reports[0].free_bytes = 50 * kGiB;  // GPU 0 has less free, as both its ranks read it
  reports[2].free_bytes = 50 * kGiB;
  const std::vector<RankGpuShortfall> shortfalls = find_rank_memory_shortfalls(reports);
  ASSERT_EQ(shortfalls.size(), 1u);
  EXPECT_EQ(shortfalls[0].ranks, (std::vector<int>{0, 2}));
  EXPECT_EQ(shortfalls[0].bytes.devices, (std::vector<int>{0, 2}));
  EXPECT_EQ(shortfalls[0].bytes.needed_bytes, 60 * kGiB);
  const std::string message = rank_memory_shortfall_message(shortfalls, reports);
  EXPECT_NE(message.find("GPU node1/0000:00:00.0, shared by rank 0 (virtual device 0, 30.0 GiB) "
                         "and rank 2 (virtual device 2, 30.0 GiB), needs 60.0 GiB but has 50.0 "
                         "GiB free"),
            std::string::npos)
      << message;
  EXPECT_EQ(message.find("rank 1"), std::string::npos) << "GPU 1 fits: " << message;
}

TEST(RankMemoryCheckTest, ThreeRanksOnAGpuAreListedInOrder) {
  const std::vector<RankGpuReport> reports = ranks_on_one_machine(3, 1, 10 * kGiB, 1, 4 * kGiB);
  const std::vector<RankGpuShortfall> shortfalls = find_rank_memory_shortfalls(reports);
  ASSERT_EQ(shortfalls.size(), 1u);
  const std::string message = rank_memory_shortfall_message(shortfalls, reports);
  EXPECT_NE(message.find("shared by rank 0 (virtual device 0, 4.0 GiB), rank 1 (virtual device 1, "
                         "4.0 GiB) and rank 2 (virtual device 2, 4.0 GiB), needs 12.0 GiB"),
            std::string::npos)
      << message;
}

TEST(RankMemoryCheckTest, TheLeastFreeBytesThatASharingRankReadCount) {
  std::vector<RankGpuReport> reports = ranks_on_one_machine(2, 1, 40 * kGiB, 1, 19 * kGiB);
  EXPECT_TRUE(find_rank_memory_shortfalls(reports).empty());
  reports[1].free_bytes = 37 * kGiB;  // another process allocated between the two reads
  const std::vector<RankGpuShortfall> shortfalls = find_rank_memory_shortfalls(reports);
  ASSERT_EQ(shortfalls.size(), 1u);
  EXPECT_EQ(shortfalls[0].bytes.free_bytes, 37 * kGiB);
}

TEST(RankMemoryCheckTest, EveryRankTakesTheSameDecisionWhateverTheReportsOrder) {
  // 56 GiB on each GPU; GPU 1's ranks read 70 and 55 GiB free: short by the least.
  std::vector<RankGpuReport> reports = ranks_on_one_machine(4, 2, 50 * kGiB, 2, 14 * kGiB);
  reports[1].free_bytes = 70 * kGiB;
  reports[3].free_bytes = 55 * kGiB;
  const std::vector<RankGpuShortfall> expected = find_rank_memory_shortfalls(reports);
  ASSERT_EQ(expected.size(), 2u);
  EXPECT_EQ(expected[0].ranks, (std::vector<int>{0, 2}));
  EXPECT_EQ(expected[1].ranks, (std::vector<int>{1, 3}));
  const std::string message = rank_memory_shortfall_message(expected, reports);
  EXPECT_NE(message.find("; GPU node1/0000:01:00.0, shared by rank 1"), std::string::npos)
      << message;
  const std::vector<RankGpuReport> shuffled = {reports[2], reports[3], reports[0], reports[1]};
  const std::vector<RankGpuShortfall> got = find_rank_memory_shortfalls(shuffled);
  ASSERT_EQ(got.size(), expected.size());
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i].ranks, expected[i].ranks);
    EXPECT_EQ(got[i].bytes.free_bytes, expected[i].bytes.free_bytes);
  }
  EXPECT_EQ(rank_memory_shortfall_message(got, shuffled), message);
}

// One rank per GPU: each GPU checked as before, named with its rank, with the
// one-process fixes.
TEST(RankMemoryCheckTest, ARankAloneOnItsGpuReadsAsInOneProcess) {
  std::vector<RankGpuReport> reports;
  for (int rank = 0; rank < 3; ++rank)
    reports.push_back(report(rank, "node" + std::to_string(rank) + "/0000:1B:00.0", 60 * kGiB, 2,
                             20 * kGiB, kGiB));
  reports[2].free_bytes = 40 * kGiB;
  reports[2].device_bytes = {30 * kGiB, 20 * kGiB};
  const std::vector<RankGpuShortfall> shortfalls = find_rank_memory_shortfalls(reports);
  ASSERT_EQ(shortfalls.size(), 1u);
  EXPECT_EQ(shortfalls[0].ranks, (std::vector<int>{2}));
  const std::string message = rank_memory_shortfall_message(shortfalls, reports);
  EXPECT_NE(message.find("GPU 0 of rank 2 (virtual devices 4-5) needs 51.0 GiB (the largest, "
                         "device 4, 30.0 GiB; NCCL 1.0 GiB) but has 40.0 GiB free; use more "
                         "pipeline stages (parallel.pp)"),
            std::string::npos)
      << message;
  // The same words as the one-process message, but for the GPU's name.
  const std::string one_process =
      memory_shortfall_message({shortfalls[0].bytes}, {0, 0, 0, 0, 30 * kGiB, 20 * kGiB});
  EXPECT_EQ(message.substr(message.find("(virtual devices")),
            one_process.substr(one_process.find("(virtual devices")));
}

TEST(RankMemoryCheckTest, NcclBytesOfRanksOnOneGpuAddUp) {
  std::vector<RankGpuReport> reports = ranks_on_one_machine(2, 1, 9 * kGiB, 1, 4 * kGiB);
  reports[0].nccl_bytes = kGiB;
  reports[1].nccl_bytes = kGiB;
  const std::vector<RankGpuShortfall> shortfalls = find_rank_memory_shortfalls(reports);
  ASSERT_EQ(shortfalls.size(), 1u);
  EXPECT_EQ(shortfalls[0].bytes.nccl_bytes, 2 * kGiB);
  EXPECT_NE(rank_memory_shortfall_message(shortfalls, reports)
                .find("rank 1 (virtual device 1, 5.0 GiB), needs 10.0 GiB (NCCL 2.0 GiB) but has "
                      "9.0 GiB free"),
            std::string::npos);
  reports[1].nccl_bytes = 0;
  EXPECT_TRUE(find_rank_memory_shortfalls(reports).empty());  // exactly fits
}

// With the CUDA backend's own estimates: a data-parallel replica per rank,
// on a GPU with room for one and a half replicas.
TEST(RankMemoryCheckTest, ReplicasThatFitAGpuAloneDoNotFitItTogether) {
  const Experiment dp2 =
      testing::with_plan(testing::small_experiment(), ScheduleKind::OneFOneB, 1, 1, 2);
  const std::vector<int64_t> estimate =
      estimate_device_bytes(dp2, *find_device_profile("h100"), 32 << 20);
  ASSERT_EQ(estimate.size(), 2u);
  const int64_t free_bytes = estimate[0] * 3 / 2;
  std::vector<RankGpuReport> reports;
  for (int rank = 0; rank < 2; ++rank)
    reports.push_back(
        report(rank, "node1/0000:1B:00.0", free_bytes, 1, estimate[static_cast<size_t>(rank)]));
  EXPECT_TRUE(find_rank_memory_shortfalls({reports[0]}).empty());
  EXPECT_TRUE(find_rank_memory_shortfalls({reports[1]}).empty());
  const std::vector<RankGpuShortfall> together = find_rank_memory_shortfalls(reports);
  ASSERT_EQ(together.size(), 1u);
  EXPECT_EQ(together[0].bytes.needed_bytes, estimate[0] + estimate[1]);
  // On GPUs of their own they fit.
  reports[1].gpu = "node1/0000:2A:00.0";
  EXPECT_TRUE(find_rank_memory_shortfalls(reports).empty());
}

TEST(RankMemoryCheckTest, ReportsTravelAsTextAndBadOnesAreRefused) {
  RankGpuReport sent = report(3, "node2/0000:1B:00.0", 79 * kGiB, 2, 5 * kGiB, 256 << 20);
  sent.cuda_device = 1;
  sent.device_bytes[1] = 7;
  const RankGpuReport got = decode_rank_gpu_report(encode_rank_gpu_report(sent));
  EXPECT_EQ(got.rank, 3);
  EXPECT_EQ(got.gpu, sent.gpu);
  EXPECT_EQ(got.cuda_device, 1);
  EXPECT_EQ(got.free_bytes, sent.free_bytes);
  EXPECT_EQ(got.first_device, 6);
  EXPECT_EQ(got.device_bytes, sent.device_bytes);
  EXPECT_EQ(got.nccl_bytes, sent.nccl_bytes);

  for (const std::string bad : {"", "not json", "{\"rank\": 1}", "[1, 2]"}) {
    try {
      decode_rank_gpu_report(bad);
      ADD_FAILURE() << "accepted " << bad;
    } catch (const std::runtime_error& error) {
      EXPECT_NE(std::string(error.what()).find("cannot read"), std::string::npos) << error.what();
    }
  }
  // Two ranks that claim one device.
  std::vector<RankGpuReport> clash = {report(0, "a", kGiB, 2, 1), report(1, "a", kGiB, 2, 1)};
  clash[1].first_device = 1;
  EXPECT_THROW(find_rank_memory_shortfalls(clash), std::invalid_argument);
}

}  // namespace
}  // namespace pipelab::gpu
