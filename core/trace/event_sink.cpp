#include "core/trace/event_sink.h"

#include <algorithm>
#include <utility>

namespace pipelab {

void EventSink::add_event(const TraceEvent& event) {
  std::lock_guard<std::mutex> lock(mutex_);
  pending_.events.push_back(event);
}

void EventSink::add_memory(const MemorySample& sample) {
  std::lock_guard<std::mutex> lock(mutex_);
  pending_.memory.push_back(sample);
}

void EventSink::add_step(const StepMetrics& metrics) {
  std::lock_guard<std::mutex> lock(mutex_);
  pending_.steps.push_back(metrics);
}

void EventSink::add_message(const std::string& message) {
  std::lock_guard<std::mutex> lock(mutex_);
  pending_.messages.push_back(message);
  pending_.steps_before_message.push_back(pending_.steps.size());
}

EventBatch EventSink::drain() {
  // Swap the pending batch out so the lock is held only for a pointer swap,
  // never while the reader copies or draws.
  EventBatch drained;
  std::lock_guard<std::mutex> lock(mutex_);
  std::swap(drained, pending_);
  return drained;
}

void append_batch(Trace& trace, const EventBatch& batch) {
  trace.events.insert(trace.events.end(), batch.events.begin(), batch.events.end());
  trace.memory.insert(trace.memory.end(), batch.memory.begin(), batch.memory.end());
  trace.steps.insert(trace.steps.end(), batch.steps.begin(), batch.steps.end());
  // Messages are progress text for the UI or the console; a Trace keeps data only.
}

void for_each_in_order(const EventBatch& batch, const std::function<void(const StepMetrics&)>& on_step,
                       const std::function<void(const std::string&)>& on_message) {
  size_t step = 0;
  for (size_t i = 0; i < batch.messages.size(); ++i) {
    const size_t before = i < batch.steps_before_message.size() ? batch.steps_before_message[i] : 0;
    for (; step < std::min(before, batch.steps.size()); ++step) on_step(batch.steps[step]);
    on_message(batch.messages[i]);
  }
  for (; step < batch.steps.size(); ++step) on_step(batch.steps[step]);
}

}  // namespace pipelab
