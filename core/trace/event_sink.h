// EventSink: the thread-safe queue executors push into and the UI (or the CLI)
// drains. Workers never block on a reader.
#pragma once

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

}  // namespace pipelab
