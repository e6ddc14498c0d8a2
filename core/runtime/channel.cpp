#include "core/runtime/channel.h"

#include <cassert>
#include <cstring>
#include <utility>

namespace pipelab {

MessageTag MessageTag::activation(int sender, int stage, int step, int microbatch) {
  MessageTag tag;
  tag.kind = MessageKind::Activation;
  tag.sender = sender;
  tag.stage = stage;
  tag.step = step;
  tag.microbatch = microbatch;
  return tag;
}

MessageTag MessageTag::gradient(int sender, int stage, int step, int microbatch) {
  MessageTag tag = activation(sender, stage, step, microbatch);
  tag.kind = MessageKind::Gradient;
  return tag;
}

MessageTag MessageTag::ring_chunk(MessageKind kind, int sender, int64_t collective, int ring_step) {
  MessageTag tag;
  tag.kind = kind;
  tag.sender = sender;
  tag.collective = collective;
  tag.ring_step = ring_step;
  return tag;
}

Mailbox::Mailbox(int device, DeviceAllocator& allocator, RunControl& control)
    : device_(device), allocator_(allocator), control_(control) {
  control_.add_stop_listener([this] { wake(); });
}

void Mailbox::post_copy(const MessageTag& tag, const Tensor& tensor) {
  post(tag, tensor.clone(&allocator_, MemoryCategory::CommBuffers));
}

void Mailbox::post_copy(const MessageTag& tag, const float* values, int64_t count) {
  Tensor message(1, count, &allocator_, MemoryCategory::CommBuffers);
  if (count > 0) std::memcpy(message.data(), values, static_cast<size_t>(count) * sizeof(float));
  post(tag, std::move(message));
}

void Mailbox::post(const MessageTag& tag, Tensor message) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    const bool inserted = messages_.emplace(tag, std::move(message)).second;
    assert(inserted && "two messages with one tag");
    (void)inserted;
  }
  arrived_.notify_all();
}

Tensor Mailbox::receive(const MessageTag& tag) {
  std::unique_lock<std::mutex> lock(mutex_);
  auto found = messages_.find(tag);
  if (found == messages_.end()) {
    RunControl::IdleScope idle(control_, device_);
    arrived_.wait(lock, [&] {
      found = messages_.find(tag);
      return found != messages_.end() || control_.stopping();
    });
  }
  if (found == messages_.end()) throw RunStopped{};
  Tensor message = std::move(found->second);
  messages_.erase(found);
  return message;
}

void Mailbox::clear() {
  std::map<MessageTag, Tensor> dropped;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    dropped.swap(messages_);
  }
}

int64_t Mailbox::pending() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return static_cast<int64_t>(messages_.size());
}

void Mailbox::wake() {
  // Taking the lock orders the stop flag before any waiter's next check.
  std::lock_guard<std::mutex> lock(mutex_);
  arrived_.notify_all();
}

}  // namespace pipelab
