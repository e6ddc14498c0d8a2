// DeviceTensor and CachingAllocator on a real GPU (skipped without one).
#include "gpu/memory/device_tensor.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include "gpu/device/cuda_check.h"
#include "gpu/layers/device_context.h"
#include "gpu/memory/caching_allocator.h"
#include "gpu/memory/out_of_memory.h"
#include "gpu/memory/pinned_staging.h"
#include "tests/gpu/gpu_test_support.h"

namespace pipelab::gpu {
namespace {

int64_t category_bytes(const MemoryBytes& bytes, MemoryCategory category) {
  return bytes[static_cast<int>(category)];
}

class DeviceTensorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    PIPELAB_REQUIRE_GPU();
    context_ = std::make_unique<DeviceContext>(0);
  }
  CachingAllocator* allocator() { return &context_->allocator(); }

  std::unique_ptr<DeviceContext> context_;
};

TEST_F(DeviceTensorTest, ValuesRoundTripAndNewTensorsAreZero) {
  const std::vector<float> values = testing::random_values(3 * 5, 1);
  const DeviceTensor a = DeviceTensor::from_values(3, 5, values, allocator());
  EXPECT_EQ(a.to_vector(), values);
  const DeviceTensor zeros(4, 7, allocator());
  EXPECT_EQ(zeros.to_vector(), std::vector<float>(28, 0.0f));
  const Tensor host = a.to_host();
  EXPECT_EQ(host.rows(), 3);
  EXPECT_EQ(host.to_vector(), values);
}

TEST_F(DeviceTensorTest, FillAddScaleAndCopy) {
  DeviceTensor a(2, 3, allocator());
  a.fill(1.5f);
  const DeviceTensor b = DeviceTensor::from_values(2, 3, {1, 2, 3, 4, 5, 6}, allocator());
  a.add(b);
  EXPECT_EQ(a.to_vector(), (std::vector<float>{2.5f, 3.5f, 4.5f, 5.5f, 6.5f, 7.5f}));
  a.scale(2.0f);
  EXPECT_EQ(a.to_vector(), (std::vector<float>{5, 7, 9, 11, 13, 15}));
  a.add_scaled(b, -0.5f);  // PipeMare's extrapolation step
  EXPECT_EQ(a.to_vector(), (std::vector<float>{4.5f, 6, 7.5f, 9, 10.5f, 12}));
  DeviceTensor c(2, 3, allocator());
  c.copy_from(b);
  EXPECT_EQ(c.to_vector(), b.to_vector());
  c.set_zero();
  EXPECT_EQ(c.to_vector(), std::vector<float>(6, 0.0f));
}

TEST_F(DeviceTensorTest, CountsExactBytesByCategoryLikeTheCpuTensor) {
  const MemoryBytes baseline = allocator()->current();  // the cuBLAS workspace
  {
    DeviceTensor a(3, 5, allocator(), MemoryCategory::Activations);  // 60 bytes, a 512-byte block
    EXPECT_EQ(category_bytes(allocator()->current(), MemoryCategory::Activations), 60);
    a.retag(MemoryCategory::CommBuffers);
    EXPECT_EQ(category_bytes(allocator()->current(), MemoryCategory::Activations), 0);
    EXPECT_EQ(category_bytes(allocator()->current(), MemoryCategory::CommBuffers), 60);
    const DeviceTensor b = a.clone(MemoryCategory::Gradients);
    EXPECT_EQ(category_bytes(allocator()->current(), MemoryCategory::Gradients), 60);
    EXPECT_EQ(b.to_vector(), a.to_vector());
    DeviceTensor moved = std::move(a);
    EXPECT_TRUE(a.empty());  // NOLINT(bugprone-use-after-move): moved-from is empty
    EXPECT_EQ(moved.rows(), 3);
    moved.reset();
    EXPECT_EQ(category_bytes(allocator()->current(), MemoryCategory::CommBuffers), 0);
  }
  EXPECT_EQ(allocator()->current(), baseline);
}

// ZeRO 3 releases a weight between uses (reset) and gathers it again into
// the same slot: its bf16 copy goes with the values and is made again, from
// the new values, by the next GEMM that reads it.
TEST_F(DeviceTensorTest, AResetWeightFreesItsBf16CopyAndMakesItAgainForNewValues) {
  const MemoryBytes baseline = allocator()->current();
  DeviceTensor weight = DeviceTensor::from_values(4, 8, testing::random_values(32, 3), allocator(),
                                                  MemoryCategory::Weights);
  weight.keep_bf16_copy(MemoryCategory::Weights);
  EXPECT_EQ(category_bytes(allocator()->current(), MemoryCategory::Weights) -
                category_bytes(baseline, MemoryCategory::Weights),
            32 * 4 + 32 * 2);
  weight.reset();
  EXPECT_TRUE(weight.empty());
  EXPECT_TRUE(weight.has_bf16_copy());  // the slot still keeps one
  EXPECT_EQ(allocator()->current(), baseline);
  const std::vector<float> regathered = {1.0f, 2.0f, -3.0f, 0.5f, 4.0f, -8.0f, 16.0f, 0.25f};
  weight = DeviceTensor::from_values(2, 4, regathered, allocator(), MemoryCategory::CommBuffers);
  const uint16_t* copy = weight.refresh_bf16_copy();
  std::vector<uint16_t> bits(8);
  PIPELAB_CUDA_CHECK(
      cudaMemcpy(bits.data(), copy, bits.size() * sizeof(uint16_t), cudaMemcpyDeviceToHost));
  for (size_t i = 0; i < bits.size(); ++i) {
    // These values are exact in bf16: the copy is their upper 16 bits.
    uint32_t word = 0;
    std::memcpy(&word, &regathered[i], sizeof(word));
    EXPECT_EQ(bits[i], static_cast<uint16_t>(word >> 16)) << i;
  }
  EXPECT_EQ(category_bytes(allocator()->current(), MemoryCategory::Weights) -
                category_bytes(baseline, MemoryCategory::Weights),
            8 * 2);  // the copy, counted as it was kept
}

TEST_F(DeviceTensorTest, ClonesOntoAnotherVirtualDeviceOfTheSameGpu) {
  DeviceContext other(0);
  const std::vector<float> values = testing::random_values(64 * 33, 2);
  const DeviceTensor a = DeviceTensor::from_values(64, 33, values, allocator());
  const int64_t before = other.allocator().current_total();
  DeviceTensor b = a.clone(&other.allocator(), MemoryCategory::CommBuffers);
  EXPECT_EQ(b.allocator(), &other.allocator());
  EXPECT_EQ(other.allocator().current_total() - before, a.bytes());
  EXPECT_EQ(b.to_vector(), values);
  b.reset();
  EXPECT_EQ(other.allocator().current_total(), before);
}

TEST_F(DeviceTensorTest, PinnedStagingUploadsTensorsTargetsAndLabels) {
  // Slots pinned up front for 8-row micro-batches of 5 inputs or 3 targets.
  PinnedStaging staging(0, microbatch_staging_bytes(8, 5, 3));
  EXPECT_EQ(staging.slot_bytes(), 8 * 5 * 4);
  // More uploads than slots: each slot is reused once its copy is done.
  for (int i = 0; i < 3 * PinnedStaging::kSlots; ++i) {
    const std::vector<float> inputs = testing::random_values(8 * 5, 100 + i);
    const DeviceTensor a = staging.upload(Tensor::from_values(8, 5, inputs), *allocator(),
                                          MemoryCategory::Activations);
    EXPECT_EQ(a.to_vector(), inputs);
    const std::vector<float> targets = testing::random_values(8 * 3, 200 + i);
    const DeviceTensor t =
        staging.upload(targets.data(), 8, 3, *allocator(), MemoryCategory::Workspace);
    EXPECT_EQ(t.to_vector(), targets);
  }
  const std::vector<int32_t> labels = {3, 1, 4, 1, 5, 9, 2, 6};
  const DeviceBuffer device_labels = staging.upload(labels, *allocator(), MemoryCategory::Workspace);
  std::vector<int32_t> back(labels.size());
  PIPELAB_CUDA_CHECK(cudaMemcpy(back.data(), device_labels.data(), labels.size() * 4,
                                cudaMemcpyDeviceToHost));
  EXPECT_EQ(back, labels);
  // A larger upload than reserved still works (its slot is pinned again).
  const std::vector<float> big = testing::random_values(64 * 64, 300);
  EXPECT_EQ(staging.upload(Tensor::from_values(64, 64, big), *allocator(),
                           MemoryCategory::Activations)
                .to_vector(),
            big);
}

TEST(DeviceTensorPeerTest, ClonesOntoAnotherGpu) {
  PIPELAB_REQUIRE_GPUS(2);
  DeviceContext first(0), second(1);
  const std::vector<float> values = testing::random_values(128 * 7, 3);
  const DeviceTensor a = DeviceTensor::from_values(128, 7, values, &first.allocator());
  const DeviceTensor b = a.clone(&second.allocator(), MemoryCategory::CommBuffers);
  EXPECT_EQ(b.device(), 1);
  EXPECT_EQ(b.to_vector(), values);
}

TEST_F(DeviceTensorTest, AllocatorReusesFreedBlocksOfTheSameClass) {
  const int64_t reserved = allocator()->reserved_bytes();
  void* first = allocator()->allocate(1000, MemoryCategory::Workspace);
  EXPECT_EQ(allocator()->reserved_bytes(), reserved + 1024);
  allocator()->release(first, 1000, MemoryCategory::Workspace);
  EXPECT_EQ(allocator()->cached_bytes(), 1024);
  // 900 bytes fall in the same 1024-byte class: the same block comes back.
  void* second = allocator()->allocate(900, MemoryCategory::Activations);
  EXPECT_EQ(second, first);
  EXPECT_EQ(allocator()->reserved_bytes(), reserved + 1024);
  EXPECT_EQ(allocator()->cached_bytes(), 0);
  allocator()->release(second, 900, MemoryCategory::Activations);
}

TEST_F(DeviceTensorTest, AllocatorAccountingIsExactAndReturnsToBaseline) {
  CachingAllocator& a = *allocator();
  const MemoryBytes baseline = a.current();
  const int64_t baseline_total = a.current_total();
  a.reset_peak();
  std::vector<MemoryBytes> samples;
  a.set_listener([&](const MemoryBytes& bytes) { samples.push_back(bytes); });
  {
    DeviceTensor w(100, 30, &a, MemoryCategory::Weights);         // 12000 bytes
    DeviceTensor g(100, 30, &a, MemoryCategory::Gradients);       // 12000
    DeviceTensor s(100, 30, &a, MemoryCategory::OptimizerState);  // 12000
    DeviceTensor x(7, 13, &a, MemoryCategory::Activations);       // 364
    EXPECT_EQ(category_bytes(a.current(), MemoryCategory::Weights),
              category_bytes(baseline, MemoryCategory::Weights) + 12000);
    EXPECT_EQ(category_bytes(a.current(), MemoryCategory::Activations), 364);
    EXPECT_EQ(a.current_total(), baseline_total + 36364);
    x.reset();
    w.retag(MemoryCategory::StashedWeights);
    EXPECT_EQ(category_bytes(a.current(), MemoryCategory::StashedWeights), 12000);
    EXPECT_EQ(a.peak_total(), baseline_total + 36364);
  }
  a.set_listener(nullptr);
  EXPECT_EQ(a.current(), baseline);
  EXPECT_EQ(a.peak_total(), baseline_total + 36364);
  // One sample per allocation, release and retag: 4 + 1 + 1 + 3.
  ASSERT_EQ(samples.size(), 9u);
  EXPECT_EQ(samples.back(), baseline);
  // Everything freed is cached, and empty_cache gives it back to CUDA.
  EXPECT_GT(a.cached_bytes(), 0);
  const int64_t reserved = a.reserved_bytes();
  const int64_t cached = a.cached_bytes();
  a.empty_cache();
  EXPECT_EQ(a.cached_bytes(), 0);
  EXPECT_EQ(a.reserved_bytes(), reserved - cached);
  const DeviceMemoryInfo info = a.memory_info();
  EXPECT_GT(info.total_bytes, 0);
  EXPECT_GT(info.free_bytes, 0);
  EXPECT_EQ(info.counted_bytes, baseline_total);
  EXPECT_EQ(info.reserved_bytes, a.reserved_bytes());
}

TEST_F(DeviceTensorTest, ImpossibleAllocationThrowsAClearErrorAndLeavesTheAllocatorUsable) {
  CachingAllocator& a = *allocator();
  const DeviceMemoryInfo info = a.memory_info();
  const MemoryBytes before = a.current();
  const int64_t before_total = a.current_total();
  const int64_t asked = info.total_bytes + (int64_t{1} << 30);
  try {
    DeviceTensor huge = DeviceTensor::uninitialized(asked / 4, 1, &a, MemoryCategory::Activations);
    FAIL() << "allocated " << asked << " bytes on a GPU of " << info.total_bytes;
  } catch (const GpuOutOfMemory& error) {
    const std::string message = error.what();
    EXPECT_EQ(message.rfind("out of GPU memory on GPU 0: asked " + format_bytes(asked / 4 * 4) +
                                " for activations, ",
                            0),
              0u)
        << message;
    EXPECT_NE(message.find("; this device counts " + format_bytes(before_total) + " in use"),
              std::string::npos)
        << message;
    EXPECT_EQ(error.report().counted_bytes, before_total);
    EXPECT_EQ(error.report().cached_bytes, 0);  // emptied before giving up
    EXPECT_GE(error.report().gpu_usage.allocators, 1);
    EXPECT_NE(message.find(" free; this device counts "), std::string::npos) << message;
    const std::string advice = "; use fewer micro-batches in flight, recompute, or more pipeline stages";
    ASSERT_GE(message.size(), advice.size()) << message;
    EXPECT_EQ(message.substr(message.size() - advice.size()), advice) << message;
    EXPECT_EQ(error.asked_bytes(), asked / 4 * 4);
    EXPECT_EQ(error.category(), MemoryCategory::Activations);
    EXPECT_LE(error.free_bytes(), info.total_bytes);
  }
  EXPECT_EQ(a.current(), before);
  const DeviceTensor small = DeviceTensor::from_values(1, 2, {1.0f, 2.0f}, &a);
  EXPECT_EQ(small.to_vector(), (std::vector<float>{1.0f, 2.0f}));
}

}  // namespace
}  // namespace pipelab::gpu
