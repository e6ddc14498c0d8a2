#include "gpu/memory/device_buffer.h"

#include <stdexcept>
#include <string>
#include <utility>

namespace pipelab::gpu {

DeviceBuffer::DeviceBuffer(int64_t bytes, CachingAllocator* allocator, MemoryCategory category)
    : bytes_(bytes), allocator_(allocator), category_(category) {
  if (bytes < 0)
    throw std::invalid_argument("a device buffer needs >= 0 bytes, got " + std::to_string(bytes));
  if (bytes > 0 && !allocator)
    throw std::invalid_argument("a device buffer of " + std::to_string(bytes) +
                                " bytes needs an allocator (its GPU's CachingAllocator)");
  if (bytes > 0) data_ = allocator->allocate(bytes, category);
}

DeviceBuffer::DeviceBuffer(int64_t bytes, CachingAllocator* allocator, MemoryCategory category,
                           Idle)
    : bytes_(bytes), allocator_(allocator), category_(category), idle_(true) {
  if (bytes < 0)
    throw std::invalid_argument("a device buffer needs >= 0 bytes, got " + std::to_string(bytes));
  if (bytes > 0 && !allocator)
    throw std::invalid_argument("a device buffer of " + std::to_string(bytes) +
                                " bytes needs an allocator (its GPU's CachingAllocator)");
  if (bytes > 0) data_ = allocator->allocate_idle(bytes, category);
}

DeviceBuffer::DeviceBuffer(DeviceBuffer&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)),
      bytes_(std::exchange(other.bytes_, 0)),
      allocator_(std::exchange(other.allocator_, nullptr)),
      category_(other.category_),
      idle_(std::exchange(other.idle_, false)),
      other_streams_(std::move(other.other_streams_)) {
  other.other_streams_.clear();
}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  if (this != &other) {
    reset();
    data_ = std::exchange(other.data_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
    allocator_ = std::exchange(other.allocator_, nullptr);
    category_ = other.category_;
    idle_ = std::exchange(other.idle_, false);
    other_streams_ = std::move(other.other_streams_);
    other.other_streams_.clear();
  }
  return *this;
}

void DeviceBuffer::retag(MemoryCategory category) {
  if (allocator_ && bytes_ > 0) allocator_->retag(bytes_, category_, category);
  category_ = category;
}

void DeviceBuffer::record_stream(StreamOnDevice stream) {
  if (!data_) return;
  if (stream == StreamOnDevice{allocator_->stream(), allocator_->device()}) return;
  for (const StreamOnDevice& known : other_streams_)
    if (known == stream) return;
  other_streams_.push_back(stream);
}

void DeviceBuffer::reset() {
  if (data_) {
    if (idle_ || !other_streams_.empty())
      allocator_->release_fenced(data_, bytes_, category_, other_streams_);
    else
      allocator_->release(data_, bytes_, category_);
  }
  data_ = nullptr;
  bytes_ = 0;
  idle_ = false;
  other_streams_.clear();
}

}  // namespace pipelab::gpu
