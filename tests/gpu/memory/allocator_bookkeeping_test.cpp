// Host-only checks of the caching allocator's bookkeeping (size classes, the
// free-block pool, per-category accounting, the per-GPU registry) and of the
// out-of-memory message: none of them needs a GPU.
#include <gtest/gtest.h>

#include <cstdint>
#include <set>
#include <span>
#include <vector>

#include "gpu/memory/allocator_registry.h"
#include "gpu/memory/block_pool.h"
#include "gpu/memory/caching_allocator.h"
#include "gpu/memory/memory_ledger.h"
#include "gpu/memory/out_of_memory.h"
#include "gpu/memory/pinned_staging.h"
#include "tests/gpu/gpu_test_support.h"

namespace pipelab::gpu {
namespace {

constexpr int64_t kGiB = int64_t{1} << 30;

TEST(BlockSizeTest, RoundsUpTo512ByteClasses) {
  EXPECT_EQ(block_size_for(0), 0);
  EXPECT_EQ(block_size_for(1), 512);
  EXPECT_EQ(block_size_for(511), 512);
  EXPECT_EQ(block_size_for(512), 512);
  EXPECT_EQ(block_size_for(513), 1024);
  EXPECT_EQ(block_size_for(4 * 1000), 4096);
  EXPECT_EQ(block_size_for(80 * kGiB + 1), 80 * kGiB + 512);
  EXPECT_THROW(block_size_for(-1), std::invalid_argument);
}

// Fake addresses: the pool never dereferences what it keeps.
void* fake(uintptr_t address) { return reinterpret_cast<void*>(address); }

TEST(BlockPoolTest, ReusesBlocksOnlyOfTheSameClass) {
  BlockPool pool;
  EXPECT_EQ(pool.take(512), nullptr);
  pool.put(fake(0x1000), 512);
  pool.put(fake(0x2000), 1024);
  pool.put(fake(0x3000), 512);
  EXPECT_EQ(pool.cached_bytes(), 2048);
  EXPECT_EQ(pool.cached_blocks(), 3);
  EXPECT_EQ(pool.take(1536), nullptr);
  // The most recently freed block of a class comes back first.
  EXPECT_EQ(pool.take(512), fake(0x3000));
  EXPECT_EQ(pool.take(512), fake(0x1000));
  EXPECT_EQ(pool.take(512), nullptr);
  EXPECT_EQ(pool.cached_bytes(), 1024);
  EXPECT_EQ(pool.take(1024), fake(0x2000));
  EXPECT_EQ(pool.cached_bytes(), 0);
  EXPECT_EQ(pool.cached_blocks(), 0);
}

TEST(BlockPoolTest, TakeAllEmptiesThePool) {
  BlockPool pool;
  pool.put(fake(0x1000), 512);
  pool.put(fake(0x2000), 4096);
  pool.put(fake(0x3000), 512);
  const std::vector<BlockPool::Block> blocks = pool.take_all();
  ASSERT_EQ(blocks.size(), 3u);
  std::set<uintptr_t> addresses;
  int64_t bytes = 0;
  for (const BlockPool::Block& block : blocks) {
    addresses.insert(reinterpret_cast<uintptr_t>(block.data));
    bytes += block.bytes;
  }
  EXPECT_EQ(addresses, (std::set<uintptr_t>{0x1000, 0x2000, 0x3000}));
  EXPECT_EQ(bytes, 512 + 4096 + 512);
  EXPECT_EQ(pool.cached_bytes(), 0);
  EXPECT_EQ(pool.take(512), nullptr);
}

TEST(MemoryLedgerTest, CountsPerCategoryWithPeaksAndReturnsToZero) {
  MemoryLedger ledger;
  std::vector<MemoryBytes> samples;
  ledger.set_listener([&](const MemoryBytes& bytes) { samples.push_back(bytes); });
  ledger.add(MemoryCategory::Weights, 1000);
  ledger.add(MemoryCategory::Activations, 300);
  ledger.add(MemoryCategory::Activations, 200);
  EXPECT_EQ(ledger.current(MemoryCategory::Weights), 1000);
  EXPECT_EQ(ledger.current(MemoryCategory::Activations), 500);
  EXPECT_EQ(ledger.current_total(), 1500);
  ledger.remove(MemoryCategory::Activations, 300);
  ledger.retag(1000, MemoryCategory::Weights, MemoryCategory::StashedWeights);
  EXPECT_EQ(ledger.current(MemoryCategory::Weights), 0);
  EXPECT_EQ(ledger.current(MemoryCategory::StashedWeights), 1000);
  EXPECT_EQ(ledger.current_total(), 1200);
  EXPECT_EQ(ledger.peak_total(), 1500);
  EXPECT_EQ(ledger.peak_by_category()[static_cast<int>(MemoryCategory::Activations)], 500);
  EXPECT_EQ(ledger.peak_by_category()[static_cast<int>(MemoryCategory::Weights)], 1000);

  ledger.reset_peak();
  EXPECT_EQ(ledger.peak_total(), 1200);
  ledger.remove(MemoryCategory::Activations, 200);
  ledger.remove(MemoryCategory::StashedWeights, 1000);
  EXPECT_EQ(ledger.current_total(), 0);
  EXPECT_EQ(ledger.peak_total(), 1200);

  // One sample per change (a retag is one change), in order, ending at zero.
  ASSERT_EQ(samples.size(), 7u);
  EXPECT_EQ(samples[1][static_cast<int>(MemoryCategory::Activations)], 300);
  EXPECT_EQ(samples[4][static_cast<int>(MemoryCategory::StashedWeights)], 1000);
  EXPECT_EQ(total_bytes(samples.back()), 0);
}

TEST(MemoryLedgerTest, ZeroByteChangesAreNotSampled) {
  MemoryLedger ledger;
  int calls = 0;
  ledger.set_listener([&](const MemoryBytes&) { ++calls; });
  ledger.add(MemoryCategory::Workspace, 0);
  ledger.retag(0, MemoryCategory::Workspace, MemoryCategory::Weights);
  EXPECT_EQ(calls, 0);
}

TEST(OutOfMemoryTest, MessageNamesBytesCategoryGpuFreeCountedAndCachedMemory) {
  OutOfMemoryReport report{.gpu = 0,
                           .asked_bytes = 80 * kGiB,
                           .category = MemoryCategory::Activations,
                           .free_bytes = static_cast<int64_t>(12.3 * static_cast<double>(kGiB)),
                           .counted_bytes = 20 * kGiB,
                           .cached_bytes = 0,
                           .gpu_usage = {1, 20 * kGiB, 0}};
  // Alone on its GPU: nothing about other virtual devices.
  EXPECT_EQ(out_of_memory_message(report),
            "out of GPU memory on GPU 0: asked 80.0 GiB for activations, 12.3 GiB free; this "
            "device counts 20.0 GiB in use and holds 0 B cached; use fewer micro-batches in "
            "flight, recompute, or more pipeline stages");
  // Sharing the GPU: what all of its virtual devices count and hold.
  report.cached_bytes = int64_t{3} << 20;
  report.gpu_usage = {4, 60 * kGiB, int64_t{5} << 20};
  EXPECT_EQ(out_of_memory_message(report),
            "out of GPU memory on GPU 0: asked 80.0 GiB for activations, 12.3 GiB free; this "
            "device counts 20.0 GiB in use and holds 3.0 MiB cached; the 4 virtual devices on "
            "that GPU count 60.0 GiB and hold 5.0 MiB; use fewer micro-batches in flight, "
            "recompute, or more pipeline stages");

  const GpuOutOfMemory error({.gpu = 3,
                              .asked_bytes = 5 * kGiB,
                              .category = MemoryCategory::OptimizerState,
                              .free_bytes = kGiB / 2,
                              .gpu_usage = {1, 0, 0}});
  EXPECT_EQ(std::string(error.what()).rfind("out of GPU memory on GPU 3: asked 5.0 GiB for "
                                            "optimizer state, 512.0 MiB free; ",
                                            0),
            0u)
      << error.what();
  EXPECT_EQ(error.device(), 3);
  EXPECT_EQ(error.asked_bytes(), 5 * kGiB);
  EXPECT_EQ(error.category(), MemoryCategory::OptimizerState);
  EXPECT_EQ(error.free_bytes(), kGiB / 2);
}

TEST(OutOfMemoryTest, FormatsBytesInTheLargestFittingUnit) {
  EXPECT_EQ(format_bytes(0), "0 B");
  EXPECT_EQ(format_bytes(1023), "1023 B");
  EXPECT_EQ(format_bytes(1024), "1.0 KiB");
  EXPECT_EQ(format_bytes(1536), "1.5 KiB");
  EXPECT_EQ(format_bytes(int64_t{3} << 20), "3.0 MiB");
  EXPECT_EQ(format_bytes(141 * kGiB), "141.0 GiB");
  EXPECT_EQ(format_bytes(int64_t{2} << 40), "2.0 TiB");
}

// A CUDA build must start on a machine without a GPU: making an allocator (and
// reading its counters) touches no CUDA API.
TEST(CachingAllocatorTest, ConstructionTouchesNoDriver) {
  CachingAllocator allocator(0, nullptr);
  EXPECT_EQ(allocator.device(), 0);
  EXPECT_EQ(allocator.current_total(), 0);
  EXPECT_EQ(allocator.reserved_bytes(), 0);
  EXPECT_EQ(allocator.cached_bytes(), 0);
  EXPECT_EQ(allocator.allocate(0, MemoryCategory::Weights), nullptr);
  allocator.empty_cache();  // nothing cached: no CUDA call
}

// A freed block that other streams used is fenced with CUDA events, from
// DeviceBuffer's destructor, also while a failed CUDA call's exception
// unwinds a worker's stack: when the events cannot be made or recorded (a GPU
// that faulted; here, a machine without one, where every CUDA call fails) it
// must not throw, or the process ends instead of reporting the run's error.
// The bytes leave the count; the block is never reused.
TEST(CachingAllocatorTest, ReleasingFencedMemoryOnAFailedGpuDoesNotThrow) {
  if (testing::gpu_availability().count > 0)
    GTEST_SKIP() << "needs CUDA calls to fail: a machine without a GPU";
  CachingAllocator allocator(0, nullptr);
  // No device memory can be had here: Host bytes stand in for a block's count.
  allocator.count_host(512);
  const StreamOnDevice other{nullptr, 0};
  EXPECT_NO_THROW(
      allocator.release_fenced(fake(0x1000), 512, MemoryCategory::Host, std::span(&other, 1)));
  EXPECT_EQ(allocator.current()[static_cast<size_t>(MemoryCategory::Host)], 0);
  EXPECT_EQ(allocator.cached_bytes(), 0);
}

// Pinned staging sized for a micro-batch: its largest upload, inputs, labels
// (an int32 a row) or targets. Sized without a GPU; pinning is at construction.
TEST(PinnedStagingTest, SlotsHoldAMicroBatchsLargestUpload) {
  EXPECT_EQ(microbatch_staging_bytes(64, 784, 10), 64 * 784 * 4);  // MNIST inputs
  EXPECT_EQ(microbatch_staging_bytes(64, 2, 10), 64 * 10 * 4);     // one-hot targets
  EXPECT_EQ(microbatch_staging_bytes(64, 0, 0), 64 * 4);           // labels only
  EXPECT_EQ(microbatch_staging_bytes(0, 784, 10), 0);
  // Nothing reserved: no CUDA call, so this runs without a GPU.
  const PinnedStaging lazy(0);
  EXPECT_EQ(lazy.slot_bytes(), 0);
  const PinnedBuffer empty;
  EXPECT_EQ(empty.data(), nullptr);
  EXPECT_EQ(empty.bytes(), 0);
}

// The registry lists every allocator by GPU from construction to destruction,
// so an out-of-memory on one virtual device can empty its neighbours' caches.
TEST(AllocatorRegistryTest, ListsTheAllocatorsOfEachGpu) {
  AllocatorRegistry& registry = AllocatorRegistry::instance();
  const int before_on_7 = registry.usage(7).allocators;
  {
    CachingAllocator a(7, nullptr), b(7, nullptr), c(8, nullptr);
    const GpuAllocatorUsage on_7 = registry.usage(7);
    EXPECT_EQ(on_7.allocators, before_on_7 + 2);
    EXPECT_EQ(on_7.counted_bytes, 0);
    EXPECT_EQ(on_7.cached_bytes, 0);
    EXPECT_GE(registry.usage(8).allocators, 1);
    registry.empty_caches(7);  // nothing cached anywhere: no CUDA call
  }
  EXPECT_EQ(registry.usage(7).allocators, before_on_7);
}

}  // namespace
}  // namespace pipelab::gpu
