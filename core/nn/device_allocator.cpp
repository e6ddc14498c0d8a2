#include "core/nn/device_allocator.h"

#include <cassert>
#include <cstring>
#include <new>
#include <stdexcept>
#include <string>

namespace pipelab {
namespace {

int64_t bytes_of(int64_t count) { return count * static_cast<int64_t>(sizeof(float)); }

int index_of(MemoryCategory category) { return static_cast<int>(category); }

}  // namespace

float* allocate_aligned_floats(int64_t count, Fill fill) {
  if (count < 0)
    throw std::invalid_argument("tensor size must be >= 0, got " + std::to_string(count));
  if (count == 0) return nullptr;
  // operator new with an alignment needs no size rounding (unlike aligned_alloc).
  const std::size_t bytes = static_cast<std::size_t>(bytes_of(count));
  void* data = ::operator new (bytes, std::align_val_t{kTensorAlignment});
  if (fill == Fill::Zeros) std::memset(data, 0, bytes);
  return static_cast<float*>(data);
}

void free_aligned_floats(float* data) {
  if (data) ::operator delete (data, std::align_val_t{kTensorAlignment});
}

DeviceAllocator::~DeviceAllocator() {
  assert(current_total_ == 0 && "a tensor outlived its device allocator");
  empty_cache();
}

float* DeviceAllocator::allocate(int64_t count, MemoryCategory category, Fill fill) {
  if (count == 0) return allocate_aligned_floats(0);
  float* reused = nullptr;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (auto it = cached_blocks_.find(count); it != cached_blocks_.end()) {
      reused = it->second;
      cached_blocks_.erase(it);
      cached_bytes_ -= bytes_of(count);
    }
  }
  float* data = reused;
  if (!data) {
    data = allocate_aligned_floats(count, fill);
  } else if (fill == Fill::Zeros) {
    std::memset(data, 0, static_cast<std::size_t>(bytes_of(count)));  // same contract as fresh
  }
  std::lock_guard<std::mutex> lock(mutex_);
  add_locked(category, bytes_of(count));
  notify_locked();
  return data;
}

void DeviceAllocator::release(float* data, int64_t count, MemoryCategory category) {
  if (count == 0) return;
  bool cached = false;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    assert(current_[index_of(category)] >= bytes_of(count) && "released more than was allocated");
    add_locked(category, -bytes_of(count));
    notify_locked();
    // Keep the block for the next tensor of the same size: a training step
    // allocates the same shapes every time, and fresh pages cost page faults.
    if (cached_bytes_ + bytes_of(count) <= kMaxCachedBytes) {
      cached_blocks_.emplace(count, data);
      cached_bytes_ += bytes_of(count);
      cached = true;
    }
  }
  if (!cached) free_aligned_floats(data);
}

int64_t DeviceAllocator::cached_bytes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return cached_bytes_;
}

void DeviceAllocator::empty_cache() {
  std::unordered_multimap<int64_t, float*> blocks;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    blocks.swap(cached_blocks_);
    cached_bytes_ = 0;
  }
  for (auto& [count, data] : blocks) free_aligned_floats(data);
}

void DeviceAllocator::retag(int64_t bytes, MemoryCategory from, MemoryCategory to) {
  if (bytes == 0 || from == to) return;
  std::lock_guard<std::mutex> lock(mutex_);
  assert(current_[index_of(from)] >= bytes && "retagged more than the category holds");
  add_locked(from, -bytes);
  add_locked(to, bytes);
  notify_locked();
}

void DeviceAllocator::set_listener(Listener listener) {
  std::lock_guard<std::mutex> lock(mutex_);
  listener_ = std::move(listener);
}

MemoryBytes DeviceAllocator::current() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return current_;
}

int64_t DeviceAllocator::current_total() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return current_total_;
}

int64_t DeviceAllocator::peak_total() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return peak_total_;
}

MemoryBytes DeviceAllocator::peak_by_category() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return peak_by_category_;
}

void DeviceAllocator::reset_peak() {
  std::lock_guard<std::mutex> lock(mutex_);
  peak_by_category_ = current_;
  peak_total_ = current_total_;
}

void DeviceAllocator::add_locked(MemoryCategory category, int64_t bytes) {
  const int i = index_of(category);
  current_[i] += bytes;
  if (is_on_device(category)) current_total_ += bytes;
  if (current_[i] > peak_by_category_[i]) peak_by_category_[i] = current_[i];
  if (current_total_ > peak_total_) peak_total_ = current_total_;
}

void DeviceAllocator::notify_locked() {
  if (listener_) listener_(current_);
}

}  // namespace pipelab
