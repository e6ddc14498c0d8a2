#include "core/comm/channel.h"

#include <cstring>
#include <utility>

namespace pipelab {

Mailbox::Mailbox(int device, DeviceAllocator& allocator, RunControl& control)
    : allocator_(allocator), messages_(device, control) {}

void Mailbox::post_copy(const MessageTag& tag, const Tensor& tensor) {
  messages_.post(tag, tensor.clone(&allocator_, MemoryCategory::CommBuffers));
}

void Mailbox::post_copy(const MessageTag& tag, const float* values, int64_t rows, int64_t cols) {
  Tensor message = Tensor::uninitialized(rows, cols, &allocator_, MemoryCategory::CommBuffers);
  if (message.size() > 0)
    std::memcpy(message.data(), values, static_cast<size_t>(message.size()) * sizeof(float));
  messages_.post(tag, std::move(message));
}

}  // namespace pipelab
