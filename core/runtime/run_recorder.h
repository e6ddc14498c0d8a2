// RunRecorder: turns what the device workers report into the run's event
// stream. Every op's measured event goes to the EventSink as it ends; the
// losses of the last stages and the "done with step t" of every device add up
// to one StepMetrics per step:
//   loss, accuracy     over the global batch (every replica's micro-batches);
//                      the loss includes the moe layers' auxiliary loss
//   aux_loss, expert_load  the moe layers' (summed over micro-batches and replicas)
//   step_time_s        from the previous step's end (the run's start for step 0;
//                      an evaluation in between is not counted)
//   samples_per_s      global batch / step time
//   bubble_measured    core/trace/bubbles.h over the events of that step
//   bubble_simulated   the prediction's, the same for every step
//   val_*              for steps that are evaluated (held back until then)
// A step whose loss is NaN or infinite ends the run through `on_failure`,
// with a message naming the step and suggesting a lower learning rate.
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "core/nn/loss.h"
#include "core/runtime/evaluation.h"
#include "core/runtime/run_clock.h"
#include "core/runtime/run_reporter.h"
#include "core/trace/event_sink.h"

namespace pipelab {

// The steps after which the model is evaluated: every `every`-th (none when
// 0) and the last. Computed, not listed, so a long run costs no memory per step.
struct EvaluatedSteps {
  int every = 0;
  int total_steps = 0;  // 0: none (no validation set)

  bool contains(int step) const;
  // The first evaluated step at or after `step`; total_steps when none is left.
  int first_from(int step) const;
};

struct RecorderSettings {
  int devices = 1;
  int total_steps = 1;
  int64_t global_batch = 1;
  bool classification = true;  // accuracy is reported
  double simulated_bubble = 0;
  double learning_rate = 0;        // for the divergence message
  EvaluatedSteps evaluated_steps;  // their metrics wait for validation()
};

class RunRecorder final : public RunReporter {
 public:
  // What the moe layers routed in one step, by (layer, replica, micro-batch).
  using StepRoutings = std::map<std::tuple<int, int, int>, MicrobatchRouting>;

  RunRecorder(EventSink& sink, const RunClock& clock, RecorderSettings settings,
              std::function<void(const std::string&)> on_failure);

  void event(const TraceEvent& event) override;
  void memory(const MemorySample& sample) override { sink_.add_memory(sample); }
  // Losses are summed in (replica, micro-batch) order, so the reported loss
  // does not depend on which thread came first.
  void loss(int step, int replica, int microbatch, const LossResult& result) override;
  void expert_load(int step, int replica, int microbatch, int layer,
                   const MicrobatchRouting& routing) override;
  void device_finished_step(int step) override;
  // The validation result after `step`; emits that step's metrics, now or,
  // when other processes' devices have not reported the step's end yet
  // (a run over processes), once they have.
  void validation(int step, const EvaluationResult& result);
  void message(const std::string& text) override;

  int steps_done() const { return steps_done_.load(); }
  // The last metrics emitted (for the final message).
  StepMetrics last_metrics() const;

 private:
  struct StepRecord {
    struct MicrobatchLoss {
      double loss_sum = 0;
      int64_t correct = 0;
      int64_t samples = 0;
    };
    int devices_finished = 0;
    std::map<std::pair<int, int>, MicrobatchLoss> losses;  // by (replica, micro-batch)
    StepRoutings routings;
    std::vector<TraceEvent> events;
  };
  StepMetrics complete_step_locked(int step, StepRecord& record);
  void emit_validated_locked(StepMetrics metrics, const EvaluationResult& result);
  bool completed_locked(int step) const;
  void mark_completed_locked(int step);
  void emit_locked(const StepMetrics& metrics);

  EventSink& sink_;
  const RunClock& clock_;
  RecorderSettings settings_;
  std::function<void(const std::string&)> on_failure_;
  mutable std::mutex mutex_;
  std::map<int, StepRecord> open_steps_;
  std::map<int, StepMetrics> awaiting_validation_;
  std::map<int, EvaluationResult> validation_before_step_;  // results for steps not yet complete
  // Completed steps: every step below completed_below_, and those above it in
  // completed_above_ (steps may complete out of order). Kept this way, not
  // as a set of every step, so a long run does not grow with its steps.
  int completed_below_ = 0;
  std::set<int> completed_above_;
  double last_step_end_ = 0;
  StepMetrics last_metrics_;
  std::atomic<int> steps_done_{0};
};

// "training diverged at step 12 (loss is NaN); lower training.optimizer.lr (now 5)"
std::string divergence_message(int step, double loss, double learning_rate);

}  // namespace pipelab
