// Channels between virtual devices: every device has one Mailbox that any
// other device posts into and only its own worker receives from.
//
// A message is a copy made on the receiver's allocator, so its bytes are real
// and counted on the receiving device as CommBuffers from the moment it is
// posted until the receiver takes it (the receiver then retags or frees it).
// Posting never blocks; receiving blocks until the message with the wanted tag
// is there. The wait observes the run's stop flag: a stop wakes it and the
// receive throws RunStopped instead of blocking forever.
#pragma once

#include <compare>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>

#include "core/nn/tensor.h"
#include "core/runtime/run_control.h"

namespace pipelab {

enum class MessageKind {
  Activation,           // a stage's output, to the next stage
  Gradient,             // a stage's input gradient, to the previous stage
  TensorParallelChunk,  // one ring step of a tensor-parallel all-reduce
  DataParallelChunk,    // one ring step of a data-parallel all-reduce
};

// What identifies a message at its receiver. Fields a kind does not use stay 0.
struct MessageTag {
  MessageKind kind = MessageKind::Activation;
  int sender = 0;          // device
  int stage = 0;           // activations and gradients: the sending stage
  int step = 0;            // activations and gradients: the global training step
  int microbatch = 0;      // activations and gradients
  int64_t collective = 0;  // ring chunks: which collective of the sender's group
  int ring_step = 0;       // ring chunks: 0 .. 2(n-1)-1

  auto operator<=>(const MessageTag&) const = default;

  static MessageTag activation(int sender, int stage, int step, int microbatch);
  static MessageTag gradient(int sender, int stage, int step, int microbatch);
  static MessageTag ring_chunk(MessageKind kind, int sender, int64_t collective, int ring_step);
};

class Mailbox {
 public:
  // The mailbox of device `device`, whose allocator is `allocator`. Registers
  // a wake-up with `control` (before the workers start) so a stop ends every wait.
  Mailbox(int device, DeviceAllocator& allocator, RunControl& control);
  Mailbox(const Mailbox&) = delete;
  Mailbox& operator=(const Mailbox&) = delete;

  DeviceAllocator& allocator() { return allocator_; }

  // Posts a copy of `tensor` (made here, on this device, as CommBuffers).
  void post_copy(const MessageTag& tag, const Tensor& tensor);
  // Posts a copy of `count` floats as a 1 x count row.
  void post_copy(const MessageTag& tag, const float* values, int64_t count);

  // Waits for the message with `tag` and hands it over (still counted as
  // CommBuffers). Throws RunStopped when the run stops first.
  Tensor receive(const MessageTag& tag);

  // Frees every message nobody received (after a stop).
  void clear();
  int64_t pending() const;

 private:
  void post(const MessageTag& tag, Tensor message);
  void wake();

  const int device_;
  DeviceAllocator& allocator_;
  RunControl& control_;
  mutable std::mutex mutex_;
  std::condition_variable arrived_;
  std::map<MessageTag, Tensor> messages_;
};

}  // namespace pipelab
