#include "core/runtime/report_batch.h"

#include <cstdint>
#include <stdexcept>
#include <utility>

#include "core/comm/byte_buffer.h"

namespace pipelab {
namespace {

enum class ReportKind : uint8_t { Event, Memory, Loss, ExpertLoad, FinishedStep, Message };

struct LossReport {
  int32_t step = 0;
  int32_t replica = 0;
  int32_t microbatch = 0;
  double loss_sum = 0;
  int64_t correct = 0;
  int64_t samples = 0;
};

// Followed by the routed counts, then the dropped ones (append_all).
struct ExpertLoadReport {
  int32_t step = 0;
  int32_t replica = 0;
  int32_t microbatch = 0;
  int32_t layer = 0;
  double aux_loss = 0;
};

}  // namespace

void ReportBatch::event(const TraceEvent& event) {
  std::lock_guard<std::mutex> lock(mutex_);
  append_bytes(bytes_, ReportKind::Event);
  append_bytes(bytes_, event);
}

void ReportBatch::memory(const MemorySample& sample) {
  std::lock_guard<std::mutex> lock(mutex_);
  append_bytes(bytes_, ReportKind::Memory);
  append_bytes(bytes_, sample);
}

void ReportBatch::loss(int step, int replica, int microbatch, const LossResult& result) {
  std::lock_guard<std::mutex> lock(mutex_);
  append_bytes(bytes_, ReportKind::Loss);
  append_bytes(bytes_, LossReport{step, replica, microbatch, result.loss_sum, result.correct,
                                  result.samples});
}

void ReportBatch::expert_load(int step, int replica, int microbatch, int layer,
                              const MicrobatchRouting& routing) {
  std::lock_guard<std::mutex> lock(mutex_);
  append_bytes(bytes_, ReportKind::ExpertLoad);
  append_bytes(bytes_, ExpertLoadReport{step, replica, microbatch, layer, routing.aux_loss});
  append_all(bytes_, routing.routed);
  append_all(bytes_, routing.dropped);
}

void ReportBatch::device_finished_step(int step) {
  std::lock_guard<std::mutex> lock(mutex_);
  append_bytes(bytes_, ReportKind::FinishedStep);
  append_bytes(bytes_, static_cast<int32_t>(step));
}

void ReportBatch::message(const std::string& text) {
  std::lock_guard<std::mutex> lock(mutex_);
  append_bytes(bytes_, ReportKind::Message);
  append_bytes(bytes_, static_cast<uint64_t>(text.size()));
  bytes_.insert(bytes_.end(), text.begin(), text.end());
}

std::vector<char> ReportBatch::take() {
  std::vector<char> taken;
  std::lock_guard<std::mutex> lock(mutex_);
  taken.swap(bytes_);
  return taken;
}

void replay_reports(const char* bytes, size_t size, RunReporter& to,
                    const std::function<double(double)>& to_clock) {
  ByteReader reader(bytes, size);
  while (!reader.done()) {
    switch (reader.read<ReportKind>()) {
      case ReportKind::Event: {
        TraceEvent event = reader.read<TraceEvent>();
        event.t_begin = to_clock(event.t_begin);
        event.t_end = to_clock(event.t_end);
        to.event(event);
        break;
      }
      case ReportKind::Memory: {
        MemorySample sample = reader.read<MemorySample>();
        sample.t = to_clock(sample.t);
        to.memory(sample);
        break;
      }
      case ReportKind::Loss: {
        const LossReport report = reader.read<LossReport>();
        LossResult result;
        result.loss_sum = report.loss_sum;
        result.correct = report.correct;
        result.samples = report.samples;
        to.loss(report.step, report.replica, report.microbatch, result);
        break;
      }
      case ReportKind::ExpertLoad: {
        const auto report = reader.read<ExpertLoadReport>();
        MicrobatchRouting routing;
        reader.read_all(routing.routed);
        reader.read_all(routing.dropped);
        routing.aux_loss = report.aux_loss;
        to.expert_load(report.step, report.replica, report.microbatch, report.layer, routing);
        break;
      }
      case ReportKind::FinishedStep:
        to.device_finished_step(reader.read<int32_t>());
        break;
      case ReportKind::Message: {
        const auto length = reader.read<uint64_t>();
        const char* text = reader.take(length);
        to.message(std::string(text, length));
        break;
      }
      default:
        throw std::runtime_error("malformed message between ranks (unknown report)");
    }
  }
}

}  // namespace pipelab
