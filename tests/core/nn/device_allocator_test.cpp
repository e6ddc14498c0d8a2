#include "core/nn/device_allocator.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <thread>
#include <vector>

#include "core/nn/tensor.h"

namespace pipelab {
namespace {

int64_t bytes_in(const MemoryBytes& bytes, MemoryCategory category) {
  return bytes[static_cast<int>(category)];
}

TEST(DeviceAllocator, CountsEveryCategoryExactlyAndReturnsToZero) {
  DeviceAllocator allocator(3);
  EXPECT_EQ(allocator.device(), 3);
  {
    Tensor weights(10, 20, &allocator, MemoryCategory::Weights);
    Tensor grads(10, 20, &allocator, MemoryCategory::Gradients);
    Tensor activations(7, 3, &allocator, MemoryCategory::Activations);
    const MemoryBytes now = allocator.current();
    EXPECT_EQ(bytes_in(now, MemoryCategory::Weights), 10 * 20 * 4);
    EXPECT_EQ(bytes_in(now, MemoryCategory::Gradients), 10 * 20 * 4);
    EXPECT_EQ(bytes_in(now, MemoryCategory::Activations), 7 * 3 * 4);
    EXPECT_EQ(bytes_in(now, MemoryCategory::OptimizerState), 0);
    EXPECT_EQ(allocator.current_total(), (200 + 200 + 21) * 4);
  }
  EXPECT_EQ(allocator.current_total(), 0);
  for (int64_t value : allocator.current()) EXPECT_EQ(value, 0);
  EXPECT_EQ(allocator.peak_total(), (200 + 200 + 21) * 4);
}

TEST(DeviceAllocator, RetagMovesBytesBetweenCategoriesKeepingTheTotal) {
  DeviceAllocator allocator;
  Tensor weights(4, 8, &allocator, MemoryCategory::Weights);
  Tensor stash = weights.clone(MemoryCategory::StashedWeights);
  EXPECT_EQ(bytes_in(allocator.current(), MemoryCategory::StashedWeights), 4 * 8 * 4);
  weights.retag(MemoryCategory::CommBuffers);
  EXPECT_EQ(weights.category(), MemoryCategory::CommBuffers);
  EXPECT_EQ(bytes_in(allocator.current(), MemoryCategory::Weights), 0);
  EXPECT_EQ(bytes_in(allocator.current(), MemoryCategory::CommBuffers), 4 * 8 * 4);
  EXPECT_EQ(allocator.current_total(), 2 * 4 * 8 * 4);
  weights.reset();  // released under its new category
  EXPECT_EQ(bytes_in(allocator.current(), MemoryCategory::CommBuffers), 0);
  EXPECT_EQ(allocator.current_total(), 4 * 8 * 4);
}

TEST(DeviceAllocator, PeakIsTheLargestTotalAndCanBeReset) {
  DeviceAllocator allocator;
  Tensor a(100, 1, &allocator, MemoryCategory::Activations);
  {
    Tensor b(50, 1, &allocator, MemoryCategory::Activations);
    Tensor c(25, 1, &allocator, MemoryCategory::Workspace);
  }
  Tensor d(10, 1, &allocator, MemoryCategory::Workspace);
  EXPECT_EQ(allocator.peak_total(), (100 + 50 + 25) * 4);
  EXPECT_EQ(bytes_in(allocator.peak_by_category(), MemoryCategory::Activations), 150 * 4);
  EXPECT_EQ(bytes_in(allocator.peak_by_category(), MemoryCategory::Workspace), 25 * 4);
  allocator.reset_peak();
  EXPECT_EQ(allocator.peak_total(), 110 * 4);
  EXPECT_EQ(bytes_in(allocator.peak_by_category(), MemoryCategory::Workspace), 10 * 4);
}

TEST(DeviceAllocator, ListenerSeesEveryChangeInOrder) {
  DeviceAllocator allocator;
  std::vector<int64_t> totals;
  allocator.set_listener([&](const MemoryBytes& bytes) {
    int64_t total = 0;
    for (int64_t b : bytes) total += b;
    totals.push_back(total);
  });
  {
    Tensor a(2, 2, &allocator, MemoryCategory::Activations);  // 16
    Tensor b(1, 4, &allocator, MemoryCategory::Weights);      // 32
    b.retag(MemoryCategory::StashedWeights);                  // 32 (a change of category)
    Tensor empty(0, 5, &allocator, MemoryCategory::Weights);  // no bytes: no change
  }                                                           // frees b then a: 16, 0
  EXPECT_EQ(totals, (std::vector<int64_t>{16, 32, 32, 16, 0}));
}

TEST(Tensor, StorageIsAlignedZeroedAndMoveOnly) {
  DeviceAllocator allocator;
  Tensor t(3, 5, &allocator, MemoryCategory::Activations);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(t.data()) % kTensorAlignment, 0u);
  for (float v : t.to_vector()) EXPECT_EQ(v, 0.0f);
  Tensor uncounted(3, 5);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(uncounted.data()) % kTensorAlignment, 0u);

  t.at(1, 2) = 7.0f;
  Tensor moved = std::move(t);
  EXPECT_TRUE(t.empty());
  EXPECT_EQ(moved.at(1, 2), 7.0f);
  EXPECT_EQ(allocator.current_total(), 3 * 5 * 4);  // a move allocates nothing

  Tensor copy = moved.clone();
  copy.at(1, 2) = 1.0f;
  EXPECT_EQ(moved.at(1, 2), 7.0f);
  EXPECT_EQ(allocator.current_total(), 2 * 3 * 5 * 4);

  moved =
      Tensor(1, 1, &allocator, MemoryCategory::Activations);  // move-assign frees the old storage
  EXPECT_EQ(allocator.current_total(), (15 + 1) * 4);
}

// An uninitialized tensor skips the zero fill but is counted, aligned and
// reused like any other; a zero-filled one that reuses its block is zero again.
TEST(Tensor, UninitializedStorageIsCountedAndAZeroedReuseIsZero) {
  DeviceAllocator allocator;
  {
    Tensor dirty = Tensor::uninitialized(4, 8, &allocator, MemoryCategory::Activations);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(dirty.data()) % kTensorAlignment, 0u);
    EXPECT_EQ(bytes_in(allocator.current(), MemoryCategory::Activations), 4 * 8 * 4);
    dirty.fill(3.0f);
  }
  EXPECT_EQ(allocator.current_total(), 0);
  EXPECT_EQ(allocator.cached_bytes(), 4 * 8 * 4);
  Tensor reused(4, 8, &allocator, MemoryCategory::Activations);  // the same cached block
  EXPECT_EQ(allocator.cached_bytes(), 0);
  for (float v : reused.to_vector()) EXPECT_EQ(v, 0.0f);
  Tensor uncounted = Tensor::uninitialized(3, 5);
  EXPECT_EQ(uncounted.rows(), 3);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(uncounted.data()) % kTensorAlignment, 0u);
  EXPECT_TRUE(Tensor::uninitialized(0, 7, &allocator).empty());
  EXPECT_THROW(Tensor::uninitialized(-1, 2), std::invalid_argument);
}

TEST(Tensor, CloneOntoAnotherAllocatorCountsThere) {
  DeviceAllocator sender(0), receiver(1);
  Tensor out = Tensor::from_values(2, 2, {1, 2, 3, 4}, &sender, MemoryCategory::Activations);
  Tensor in = out.clone(&receiver, MemoryCategory::CommBuffers);
  EXPECT_EQ(in.to_vector(), out.to_vector());
  EXPECT_EQ(bytes_in(receiver.current(), MemoryCategory::CommBuffers), 16);
  EXPECT_EQ(bytes_in(sender.current(), MemoryCategory::CommBuffers), 0);
}

TEST(Tensor, RejectsNegativeShapesAndWrongValueCounts) {
  EXPECT_THROW(Tensor(-1, 2), std::invalid_argument);
  EXPECT_THROW(Tensor::from_values(2, 2, {1, 2, 3}), std::invalid_argument);
}

TEST(DeviceAllocator, ThreadsAllocatingAndFreeingConcurrentlyBalance) {
  DeviceAllocator allocator;
  Tensor kept(8, 8, &allocator, MemoryCategory::Weights);
  // One thread allocates tensors that another frees, as a channel does.
  std::vector<Tensor> handed_over(2000);
  std::thread producer([&] {
    for (auto& t : handed_over) t = Tensor(4, 16, &allocator, MemoryCategory::CommBuffers);
  });
  std::thread churn([&] {
    for (int i = 0; i < 2000; ++i) Tensor scratch(16, 4, &allocator, MemoryCategory::Workspace);
  });
  producer.join();
  churn.join();
  std::thread consumer([&] {
    for (auto& t : handed_over) t.reset();
  });
  consumer.join();
  EXPECT_EQ(allocator.current_total(), 8 * 8 * 4);
  EXPECT_EQ(bytes_in(allocator.current(), MemoryCategory::CommBuffers), 0);
  EXPECT_EQ(bytes_in(allocator.current(), MemoryCategory::Workspace), 0);
  EXPECT_LE(allocator.peak_total(), (64 + 2000 * 64 + 64) * 4);
  EXPECT_GE(allocator.peak_total(), (64 + 2000 * 64) * 4);
}

}  // namespace
}  // namespace pipelab
