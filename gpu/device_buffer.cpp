#include "gpu/device_buffer.h"

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

DeviceBuffer::DeviceBuffer(DeviceBuffer&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)),
      bytes_(std::exchange(other.bytes_, 0)),
      allocator_(std::exchange(other.allocator_, nullptr)),
      category_(other.category_) {}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  if (this != &other) {
    reset();
    data_ = std::exchange(other.data_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
    allocator_ = std::exchange(other.allocator_, nullptr);
    category_ = other.category_;
  }
  return *this;
}

void DeviceBuffer::retag(MemoryCategory category) {
  if (allocator_ && bytes_ > 0) allocator_->retag(bytes_, category_, category);
  category_ = category;
}

void DeviceBuffer::reset() {
  if (data_) allocator_->release(data_, bytes_, category_);
  data_ = nullptr;
  bytes_ = 0;
}

}  // namespace pipelab::gpu
