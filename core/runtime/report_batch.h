// ReportBatch: a RunReporter that keeps what the workers of one rank report,
// as bytes, until the rank's link sends them to rank 0 (core/mpi), where
// replay_reports hands them to the run's recorder on rank 0's clock. Workers
// report from their own threads; take() is called from the link's.
#pragma once

#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "core/runtime/run_reporter.h"

namespace pipelab {

class ReportBatch final : public RunReporter {
 public:
  void event(const TraceEvent& event) override;
  void memory(const MemorySample& sample) override;
  void loss(int step, int replica, int microbatch, const LossResult& result) override;
  void expert_load(int step, int replica, int microbatch, int layer,
                   const MicrobatchRouting& routing) override;
  void device_finished_step(int step) override;
  void message(const std::string& text) override;

  // Everything reported since the last take(), in report order.
  std::vector<char> take();

 private:
  std::mutex mutex_;
  std::vector<char> bytes_;
};

// Hands every report in `bytes` (from ReportBatch::take) to `to`, with each
// time t of an event or memory sample read as to_clock(t). Throws
// std::runtime_error for bytes that are not reports.
void replay_reports(const char* bytes, size_t size, RunReporter& to,
                    const std::function<double(double)>& to_clock);

}  // namespace pipelab
