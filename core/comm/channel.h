// Channels between virtual devices: every device has one Mailbox that any
// other device posts into and only its own worker receives from.
//
// A message is a copy made on the receiver's allocator, so its bytes are real
// and counted on the receiving device as CommBuffers from the moment it is
// posted until the receiver takes it (the receiver then retags or frees it).
// Posting never blocks; receiving blocks until the message with the wanted tag
// is there (tagged_mailbox.h). The wait observes the run's stop flag: a stop
// wakes it and the receive throws RunStopped instead of blocking forever.
#pragma once

#include <cstdint>

#include "core/nn/tensor.h"
#include "core/comm/message_tag.h"
#include "core/comm/run_control.h"
#include "core/comm/tagged_mailbox.h"

namespace pipelab {

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
  // Posts a copy of the rows x cols floats at `values`.
  void post_copy(const MessageTag& tag, const float* values, int64_t rows, int64_t cols);

  // Waits for the message with `tag` and hands it over (still counted as
  // CommBuffers). Throws RunStopped when the run stops first.
  Tensor receive(const MessageTag& tag) { return messages_.receive(tag); }

  // Frees every message nobody received (after a stop).
  void clear() { messages_.clear(); }
  int64_t pending() const { return messages_.pending(); }

 private:
  DeviceAllocator& allocator_;
  TaggedMailbox<Tensor> messages_;
};

}  // namespace pipelab
