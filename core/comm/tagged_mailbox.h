// TaggedMailbox: the blocking, tag-matched message queue of one virtual
// device, whatever a message is. Any device posts into it; only its own worker
// receives, waiting until the message with the wanted tag is there. The wait
// observes the run's stop flag: a stop wakes it and the receive throws
// RunStopped instead of blocking forever.
//
// The CPU executor's Mailbox (channel.h) holds copied host tensors in one; the
// CUDA executor's holds device tensors with the event that says when their
// data has arrived. Matching by tag, not by arrival order, is what lets a
// device receive its messages in its own program order.
#pragma once

#include <cassert>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <utility>

#include "core/comm/message_tag.h"
#include "core/comm/run_control.h"

namespace pipelab {

template <typename Message>
class TaggedMailbox {
 public:
  // The mailbox of worker `device`. Registers a wake-up with `control`
  // (before the workers start) so a stop ends every wait.
  TaggedMailbox(int device, RunControl& control) : device_(device), control_(control) {
    control_.add_stop_listener([this] { wake(); });
  }
  TaggedMailbox(const TaggedMailbox&) = delete;
  TaggedMailbox& operator=(const TaggedMailbox&) = delete;

  // Never blocks. Two messages with one tag are a schedule error.
  void post(const MessageTag& tag, Message message) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      const bool inserted = messages_.emplace(tag, std::move(message)).second;
      assert(inserted && "two messages with one tag");
      (void)inserted;
      // The worker waiting for this very message is busy again from now on,
      // not only once its thread runs: a pause must not be reported between
      // the two while it still has its op to finish.
      if (awaited_ && *awaited_ == tag) control_.message_arrived(device_);
    }
    arrived_.notify_all();
  }

  // Waits for the message with `tag` and hands it over. Throws RunStopped when
  // the run stops first.
  Message receive(const MessageTag& tag) {
    std::unique_lock<std::mutex> lock(mutex_);
    auto found = messages_.find(tag);
    if (found == messages_.end()) {
      RunControl::IdleScope idle(control_, device_);
      awaited_ = tag;
      arrived_.wait(lock, [&] {
        found = messages_.find(tag);
        return found != messages_.end() || control_.stopping();
      });
      awaited_.reset();
    }
    if (found == messages_.end()) throw RunStopped{};
    Message message = std::move(found->second);
    messages_.erase(found);
    return message;
  }

  // Drops every message nobody received (after a stop), outside the lock.
  void clear() {
    std::map<MessageTag, Message> dropped;
    std::lock_guard<std::mutex> lock(mutex_);
    dropped.swap(messages_);
  }

  int64_t pending() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return static_cast<int64_t>(messages_.size());
  }

 private:
  void wake() {
    // Taking the lock orders the stop flag before any waiter's next check.
    std::lock_guard<std::mutex> lock(mutex_);
    arrived_.notify_all();
  }

  const int device_;
  RunControl& control_;
  mutable std::mutex mutex_;
  std::condition_variable arrived_;
  std::map<MessageTag, Message> messages_;
  std::optional<MessageTag> awaited_;  // what the worker waits for, while it waits
};

}  // namespace pipelab
