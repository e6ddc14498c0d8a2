#include "core/live/live_frames.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <utility>

#include "core/comm/byte_buffer.h"
#include "core/live/live_stream_error.h"

namespace pipelab {
namespace {

// What must match between the two ends (bumped when a frame changes).
struct BuildSignature {
  uint32_t format = 2;
  uint32_t event_bytes = sizeof(TraceEvent);
  uint32_t memory_bytes = sizeof(MemorySample);
  uint32_t step_bytes = sizeof(StepMetrics);
  bool operator==(const BuildSignature&) const = default;
};

void append_text(std::vector<char>& bytes, const std::string& text) {
  append_bytes(bytes, static_cast<uint64_t>(text.size()));
  bytes.insert(bytes.end(), text.begin(), text.end());
}

std::string read_text(ByteReader& reader) {
  const auto length = reader.read<uint64_t>();
  return std::string(reader.take(length), length);
}

// Every StepMetrics field, in declaration order (its moe expert loads are
// vectors, so the struct cannot travel as its bytes).
void append_step(std::vector<char>& bytes, const StepMetrics& step) {
  append_bytes(bytes, step.step);
  for (const double value :
       {step.t_end, step.loss, step.accuracy, step.val_loss, step.val_accuracy, step.step_time_s,
        step.samples_per_s, step.bubble_measured, step.bubble_simulated, step.aux_loss})
    append_bytes(bytes, value);
  append_bytes(bytes, static_cast<uint64_t>(step.expert_load.size()));
  for (const ExpertLoad& load : step.expert_load) {
    append_bytes(bytes, load.layer);
    append_all(bytes, load.routed);
    append_all(bytes, load.dropped);
  }
}

StepMetrics read_step(ByteReader& reader) {
  StepMetrics step;
  step.step = reader.read<int>();
  for (double* value : {&step.t_end, &step.loss, &step.accuracy, &step.val_loss, &step.val_accuracy,
                        &step.step_time_s, &step.samples_per_s, &step.bubble_measured,
                        &step.bubble_simulated, &step.aux_loss})
    *value = reader.read<double>();
  const auto loads = reader.read<uint64_t>();
  for (uint64_t i = 0; i < loads; ++i) {
    ExpertLoad load;
    load.layer = reader.read<int>();
    reader.read_all(load.routed);
    reader.read_all(load.dropped);
    step.expert_load.push_back(std::move(load));
  }
  return step;
}

// What a frame holds that its run cannot have ("an event that ends before
// it begins"): the whole message is "the run sent " and it.
[[noreturn]] void run_sent(const std::string& what) {
  throw LiveStreamError("the run sent " + what);
}

void check_device(int device, int devices, const char* what) {
  if (device < 0 || device >= devices)
    run_sent(std::string(what) + " on device " + std::to_string(device) +
             ", but its experiment has " + std::to_string(devices) + " devices");
}

void check_time(double t, const char* what) {
  if (!std::isfinite(t)) run_sent(std::string(what) + " at a time that is not a finite number");
}

// What the views index by or draw with, checked as a run file's reader checks
// its rows (core/io/run_file.cpp): devices of the run, known kinds and groups,
// finite times, byte counts in range, one dropped count per routed count.
void check_batch(const EventBatch& batch, int devices) {
  for (const TraceEvent& event : batch.events) {
    check_device(event.device, devices, "an event");
    if (static_cast<size_t>(event.op.kind) >= kOpKindCount)
      run_sent("an event of kind " + std::to_string(static_cast<int>(event.op.kind)) +
               ", which is not an op kind");
    const int group = static_cast<int>(event.op.group);
    if (group < 0 || group > static_cast<int>(CommGroup::ContextParallel))
      run_sent("an event of group " + std::to_string(static_cast<int>(event.op.group)) +
               ", which is not a group");
    check_time(event.t_begin, "an event");
    check_time(event.t_end, "an event");
    if (event.t_end < event.t_begin) run_sent("an event that ends before it begins");
  }
  for (const MemorySample& sample : batch.memory) {
    check_device(sample.device, devices, "a memory sample");
    check_time(sample.t, "a memory sample");
    for (const int64_t bytes : sample.bytes)
      if (bytes < 0 || bytes > kMaxCategoryBytes)
        run_sent("a memory sample of " + std::to_string(bytes) + " bytes in one category");
  }
  for (const StepMetrics& step : batch.steps) {
    check_time(step.t_end, "a step's metrics");
    for (const ExpertLoad& load : step.expert_load)
      if (load.routed.size() != load.dropped.size())
        run_sent("an expert load with " + std::to_string(load.routed.size()) +
                 " routed counts but " + std::to_string(load.dropped.size()) + " dropped ones");
  }
}

std::vector<char> frame(LiveFrame kind, const std::vector<char>& payload) {
  // Sized once and filled in place (GCC 12 misreads growing an empty vector
  // by insert as an overflow).
  const uint64_t size = payload.size();
  std::vector<char> bytes(sizeof(kind) + sizeof(size) + payload.size());
  char* out = bytes.data();
  std::memcpy(out, &kind, sizeof(kind));
  std::memcpy(out + sizeof(kind), &size, sizeof(size));
  std::copy(payload.begin(), payload.end(), out + sizeof(kind) + sizeof(size));
  return bytes;
}

}  // namespace

std::vector<char> live_hello_frame(const LiveHello& hello) {
  std::vector<char> payload;
  append_bytes(payload, BuildSignature{});
  append_bytes(payload, hello.steps_total);
  append_text(payload, hello.experiment_json);
  return frame(LiveFrame::Hello, payload);
}

std::vector<char> live_batch_frame(const EventBatch& batch) {
  std::vector<char> payload;
  append_all(payload, batch.events);
  append_all(payload, batch.memory);
  append_bytes(payload, static_cast<uint64_t>(batch.steps.size()));
  for (const StepMetrics& step : batch.steps) append_step(payload, step);
  append_bytes(payload, static_cast<uint64_t>(batch.messages.size()));
  for (const std::string& message : batch.messages) append_text(payload, message);
  return frame(LiveFrame::Batch, payload);
}

std::vector<char> live_end_frame(int32_t state, const std::string& error) {
  std::vector<char> payload;
  append_bytes(payload, state);
  append_text(payload, error);
  return frame(LiveFrame::End, payload);
}

LiveHello read_live_hello(const char* payload, size_t size) {
  ByteReader reader(payload, size);
  if (!(reader.read<BuildSignature>() == BuildSignature{}))
    throw LiveStreamError(
        "the run streams another PipeLab build's events; attach with the same build");
  LiveHello hello;
  hello.steps_total = reader.read<int32_t>();
  if (hello.steps_total < 0)
    throw LiveStreamError("the run says it trains " + std::to_string(hello.steps_total) + " steps");
  hello.experiment_json = read_text(reader);
  return hello;
}

EventBatch read_live_batch(const char* payload, size_t size, int devices) {
  ByteReader reader(payload, size);
  EventBatch batch;
  reader.read_all(batch.events);
  reader.read_all(batch.memory);
  const auto steps = reader.read<uint64_t>();
  for (uint64_t i = 0; i < steps; ++i) batch.steps.push_back(read_step(reader));
  const auto messages = reader.read<uint64_t>();
  for (uint64_t i = 0; i < messages; ++i) batch.messages.push_back(read_text(reader));
  check_batch(batch, devices);
  return batch;
}

RunState read_live_end(const char* payload, size_t size, std::string& error) {
  ByteReader reader(payload, size);
  const auto state = reader.read<int32_t>();
  error = read_text(reader);
  for (const RunState end : {RunState::Finished, RunState::Stopped, RunState::Failed})
    if (state == static_cast<int32_t>(end)) return end;
  throw LiveStreamError("the run ended in state " + std::to_string(state) +
                        ", which is not an end");
}

}  // namespace pipelab
