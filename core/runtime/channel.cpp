#include "core/runtime/channel.h"

#include <cstring>
#include <utility>

namespace pipelab {

Mailbox::Mailbox(int device, DeviceAllocator& allocator, RunControl& control)
    : allocator_(allocator), messages_(device, control) {}

void Mailbox::post_copy(const MessageTag& tag, const Tensor& tensor) {
  messages_.post(tag, tensor.clone(&allocator_, MemoryCategory::CommBuffers));
}

void Mailbox::post_copy(const MessageTag& tag, const float* values, int64_t count) {
  Tensor message(1, count, &allocator_, MemoryCategory::CommBuffers);
  if (count > 0) std::memcpy(message.data(), values, static_cast<size_t>(count) * sizeof(float));
  messages_.post(tag, std::move(message));
}

}  // namespace pipelab
