#include "core/runtime/run_recorder.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <utility>

#include "core/trace/bubbles.h"

namespace pipelab {
namespace {

std::string number(double value, const char* format = "%g") {
  char text[64];
  std::snprintf(text, sizeof text, format, value);
  return text;
}

std::string progress_text(const StepMetrics& metrics, int total_steps) {
  std::string text = "step " + std::to_string(metrics.step + 1) + "/" +
                     std::to_string(total_steps) + ": loss " + number(metrics.loss, "%.4f");
  if (!std::isnan(metrics.accuracy))
    text += ", accuracy " + number(100 * metrics.accuracy, "%.1f") + "%";
  if (!std::isnan(metrics.val_loss))
    text += ", validation loss " + number(metrics.val_loss, "%.4f");
  if (!std::isnan(metrics.val_accuracy))
    text += ", validation accuracy " + number(100 * metrics.val_accuracy, "%.1f") + "%";
  return text;
}

// Each moe layer's routing summed over its micro-batches (in layer order), and
// the auxiliary loss added to the step's loss.
void add_expert_load(const RunRecorder::StepRoutings& routings, StepMetrics& metrics) {
  if (routings.empty()) return;
  double aux_loss = 0;
  for (const auto& [where, routing] : routings) {
    const int layer = std::get<0>(where);
    if (metrics.expert_load.empty() || metrics.expert_load.back().layer != layer)
      metrics.expert_load.push_back({layer, std::vector<int64_t>(routing.routed.size(), 0),
                                     std::vector<int64_t>(routing.dropped.size(), 0)});
    ExpertLoad& load = metrics.expert_load.back();
    for (size_t e = 0; e < routing.routed.size(); ++e) {
      load.routed[e] += routing.routed[e];
      load.dropped[e] += routing.dropped[e];
    }
    aux_loss += routing.aux_loss;
  }
  metrics.aux_loss = aux_loss;
  metrics.loss += aux_loss;
}

}  // namespace

bool EvaluatedSteps::contains(int step) const {
  if (step < 0 || step >= total_steps) return false;
  return step == total_steps - 1 || (every > 0 && (step + 1) % every == 0);
}

int EvaluatedSteps::first_from(int step) const {
  if (step >= total_steps) return total_steps;
  if (every <= 0) return total_steps - 1;
  // The smallest s >= step with (s + 1) a multiple of `every`, in 64 bits.
  const int64_t next = (int64_t{step} + every) / every * every - 1;
  return static_cast<int>(std::min<int64_t>(next, total_steps - 1));
}

std::string divergence_message(int step, double loss, double learning_rate) {
  const char* what = std::isnan(loss) ? "NaN" : "infinite";
  return "training diverged at step " + std::to_string(step) + " (loss is " + what +
         "); lower training.optimizer.lr (now " + number(learning_rate) + ")";
}

RunRecorder::RunRecorder(EventSink& sink, const RunClock& clock, RecorderSettings settings,
                         std::function<void(const std::string&)> on_failure)
    : sink_(sink),
      clock_(clock),
      settings_(std::move(settings)),
      on_failure_(std::move(on_failure)) {}

void RunRecorder::event(const TraceEvent& event) {
  sink_.add_event(event);
  std::lock_guard<std::mutex> lock(mutex_);
  if (!completed_locked(event.op.step)) open_steps_[event.op.step].events.push_back(event);
}

void RunRecorder::loss(int step, int replica, int microbatch, const LossResult& result) {
  std::lock_guard<std::mutex> lock(mutex_);
  open_steps_[step].losses[{replica, microbatch}] = {result.loss_sum, result.correct,
                                                     result.samples};
}

void RunRecorder::expert_load(int step, int replica, int microbatch, int layer,
                              const MicrobatchRouting& routing) {
  std::lock_guard<std::mutex> lock(mutex_);
  open_steps_[step].routings[{layer, replica, microbatch}] = routing;
}

void RunRecorder::device_finished_step(int step) {
  std::string failure;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    StepRecord& record = open_steps_[step];
    if (++record.devices_finished < settings_.devices) return;
    const StepMetrics metrics = complete_step_locked(step, record);
    open_steps_.erase(step);
    mark_completed_locked(step);
    steps_done_.fetch_add(1);
    if (!std::isfinite(metrics.loss)) {
      emit_locked(metrics);
      failure = divergence_message(step, metrics.loss, settings_.learning_rate);
    } else if (settings_.evaluated_steps.contains(step)) {
      const auto early = validation_before_step_.find(step);
      if (early == validation_before_step_.end()) {
        awaiting_validation_[step] = metrics;
      } else {
        emit_validated_locked(metrics, early->second);
        validation_before_step_.erase(early);
      }
    } else {
      emit_locked(metrics);
      const int every = std::max(1, settings_.total_steps / 10);
      if ((step + 1) % every == 0) sink_.add_message(progress_text(metrics, settings_.total_steps));
    }
  }
  if (!failure.empty()) on_failure_(failure);
}

bool RunRecorder::completed_locked(int step) const {
  return step < completed_below_ || completed_above_.count(step) > 0;
}

void RunRecorder::mark_completed_locked(int step) {
  completed_above_.insert(step);
  while (!completed_above_.empty() && *completed_above_.begin() == completed_below_) {
    completed_above_.erase(completed_above_.begin());
    ++completed_below_;
  }
}

StepMetrics RunRecorder::complete_step_locked(int step, StepRecord& record) {
  StepMetrics metrics;
  metrics.step = step;
  metrics.t_end = clock_.now();
  metrics.step_time_s = metrics.t_end - last_step_end_;
  last_step_end_ = metrics.t_end;
  double loss_sum = 0;
  int64_t correct = 0;
  int64_t samples = 0;
  for (const auto& [where, loss] : record.losses) {
    loss_sum += loss.loss_sum;
    correct += loss.correct;
    samples += loss.samples;
  }
  if (samples > 0) {
    metrics.loss = loss_sum / static_cast<double>(samples);
    if (settings_.classification)
      metrics.accuracy = static_cast<double>(correct) / static_cast<double>(samples);
  }
  add_expert_load(record.routings, metrics);
  if (metrics.step_time_s > 0)
    metrics.samples_per_s = static_cast<double>(settings_.global_batch) / metrics.step_time_s;
  Trace step_trace;
  step_trace.events = std::move(record.events);
  metrics.bubble_measured = bubble_fraction(step_trace);
  metrics.bubble_simulated = settings_.simulated_bubble;
  return metrics;
}

void RunRecorder::validation(int step, const EvaluationResult& result) {
  std::lock_guard<std::mutex> lock(mutex_);
  // The next step's time starts after the evaluation, which is not training.
  last_step_end_ = std::max(last_step_end_, clock_.now());
  auto waiting = awaiting_validation_.find(step);
  if (waiting == awaiting_validation_.end()) {
    if (!completed_locked(step)) validation_before_step_[step] = result;  // else it diverged
    return;
  }
  const StepMetrics metrics = waiting->second;
  awaiting_validation_.erase(waiting);
  emit_validated_locked(metrics, result);
}

void RunRecorder::emit_validated_locked(StepMetrics metrics, const EvaluationResult& result) {
  metrics.val_loss = result.loss;
  metrics.val_accuracy = result.accuracy;
  emit_locked(metrics);
  sink_.add_message(progress_text(metrics, settings_.total_steps));
}

void RunRecorder::emit_locked(const StepMetrics& metrics) {
  last_metrics_ = metrics;
  sink_.add_step(metrics);
}

void RunRecorder::message(const std::string& text) { sink_.add_message(text); }

StepMetrics RunRecorder::last_metrics() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return last_metrics_;
}

}  // namespace pipelab
