// RunReporter: what a run's device workers report about it: every op's
// measured event, memory samples, the last stages' losses, the moe layers'
// routing, the end of a step on a device, and messages. RunRecorder (run_recorder.h) turns the
// reports into the run's event stream; on the ranks of a run spread over
// processes other than rank 0, a ReportBatch (report_batch.h) collects them
// for rank 0's recorder instead.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/nn/loss.h"
#include "core/trace/trace_events.h"

namespace pipelab {

// What a moe layer routed in one micro-batch on one replica: per expert the
// assignments that chose it and those dropped over its capacity, and the
// auxiliary loss the layer adds (already weighted).
struct MicrobatchRouting {
  std::vector<int64_t> routed;
  std::vector<int64_t> dropped;
  double aux_loss = 0;
};

class RunReporter {
 public:
  virtual ~RunReporter() = default;
  virtual void event(const TraceEvent& event) = 0;
  virtual void memory(const MemorySample& sample) = 0;
  // A last-stage device's loss on one micro-batch of `step` (one shard per replica).
  // `replica` names the part: under context parallelism each context rank
  // reports its positions' share, as replica x cp + context rank.
  virtual void loss(int step, int replica, int microbatch, const LossResult& result) = 0;
  // A moe layer's routing of one micro-batch of `step` on one replica (one
  // tensor-parallel shard reports it). A recomputed forward reports the same
  // again, which replaces the first.
  virtual void expert_load(int step, int replica, int microbatch, int layer,
                           const MicrobatchRouting& routing) = 0;
  // A device ran its last op of `step`.
  virtual void device_finished_step(int step) = 0;
  virtual void message(const std::string& text) = 0;
};

}  // namespace pipelab
