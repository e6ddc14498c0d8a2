// EventSink: the thread-safe queue executors push into and the UI (or the CLI)
// drains. Workers never block on a reader.
#pragma once

#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "core/trace/trace_events.h"

namespace pipelab {

struct EventBatch {
  std::vector<TraceEvent> events;
  std::vector<MemorySample> memory;
  std::vector<StepMetrics> steps;
  std::vector<std::string> messages;  // progress and errors, in order
  // For each message, how many of `steps` came before it (for_each_in_order).
  std::vector<size_t> steps_before_message;
  bool empty() const {
    return events.empty() && memory.empty() && steps.empty() && messages.empty();
  }
};

class EventSink {
 public:
  void add_event(const TraceEvent& event);
  void add_memory(const MemorySample& sample);
  void add_step(const StepMetrics& metrics);
  void add_message(const std::string& message);
  // Everything pushed since the last drain, in push order per kind.
  EventBatch drain();

 private:
  std::mutex mutex_;
  EventBatch pending_;
};

// Appends a batch to a trace.
void append_batch(Trace& trace, const EventBatch& batch);

// The batch's steps and messages in the order they were added (a console
// prints them so: a step's summary after the step, the end after the last);
// messages without a recorded place come first.
void for_each_in_order(const EventBatch& batch, const std::function<void(const StepMetrics&)>& on_step,
                       const std::function<void(const std::string&)>& on_message);

}  // namespace pipelab
