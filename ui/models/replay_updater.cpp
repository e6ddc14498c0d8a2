#include "ui/models/replay_updater.h"

#include <exception>

#include "core/io/experiment.h"
#include "core/sim/experiment_prediction.h"
#include "core/sim/replay.h"
#include "ui/models/run_controller.h"

namespace pipelab {

// What a worker needs: copies, so the run may go on (or be reset) meanwhile.
struct ReplayUpdater::Job {
  Experiment experiment;                  // the one the run started with
  std::shared_ptr<const Trace> measured;  // events and devices only
  int steps_measured = 0;
  bool final = false;
};

ReplayUpdater::ReplayUpdater(QObject* parent) : QObject(parent) {
  live_timer_.setSingleShot(true);
  live_timer_.setInterval(kLiveIntervalMs);
  connect(&live_timer_, &QTimer::timeout, this, &ReplayUpdater::requestLive);
}

ReplayUpdater::~ReplayUpdater() { job_.wait(); }

void ReplayUpdater::setRunController(RunController* run) {
  run_ = run;
  connect(run_, &RunController::traceReset, this, &ReplayUpdater::onTraceReset);
  connect(run_, &RunController::phaseChanged, this, &ReplayUpdater::onPhaseChanged);
  connect(run_, &RunController::traceGrew, this, [this] {
    if (run_->isActive() && !live_timer_.isActive()) live_timer_.start();
  });
}

void ReplayUpdater::onTraceReset() {
  ++generation_;  // a job still in flight belongs to the old run
  live_timer_.stop();
  pending_final_ = false;
  events_replayed_ = 0;
  measured_ = std::make_shared<Trace>();
  replay_.reset();
  emit updated();
}

void ReplayUpdater::onPhaseChanged() {
  if (run_->isActive() || run_->phase() == RunController::Phase::Idle) return;
  live_timer_.stop();
  if (run_->trace().events.empty()) return;  // stopped before the first op
  if (computing_) {
    pending_final_ = true;  // replayed once the live job is done
    return;
  }
  startJob(true);
}

void ReplayUpdater::requestLive() {
  if (!run_ || !run_->isActive() || computing_) return;
  // A replay needs at least one whole step, and something new since the last.
  const Trace& trace = run_->trace();
  if (trace.steps.empty() || static_cast<int>(trace.events.size()) == events_replayed_) return;
  startJob(false);
}

ReplayUpdater::Job ReplayUpdater::makeJob(bool final) {
  Job job;
  job.experiment = run_->experiment();
  const Trace& trace = run_->trace();
  // No job is reading measured_ now (see startJob's callers), so it may grow.
  Trace& measured = *measured_;
  measured.source = trace.source;
  measured.time_unit = trace.time_unit;
  measured.schedule = trace.schedule;
  measured.devices = trace.devices;
  // A run's events only grow between resets; a shorter trace is a new one.
  if (trace.events.size() < measured.events.size()) measured.events.clear();
  measured.events.insert(measured.events.end(),
                         trace.events.begin() + static_cast<std::ptrdiff_t>(measured.events.size()),
                         trace.events.end());
  job.measured = measured_;
  job.steps_measured = static_cast<int>(trace.steps.size());
  job.final = final;
  return job;
}

// Called only while no job is computing: requestLive and onPhaseChanged check
// computing_, onJobFinished clears it first, updateNow waits for the job.
void ReplayUpdater::startJob(bool final) {
  Job job = makeJob(final);
  events_replayed_ = static_cast<int>(job.measured->events.size());
  job_generation_ = generation_;
  job_final_ = final;
  computing_ = true;
  job_.start([job = std::move(job)] {
    return compute(job.experiment, *job.measured, job.steps_measured, job.final);
  });
}

void ReplayUpdater::onJobFinished() {
  computing_ = false;
  if (job_final_) measured_ = std::make_shared<Trace>();
  if (job_generation_ == generation_) {
    if (auto result = job_.take()) replay_ = std::move(*result);
    emit updated();
  }
  if (pending_final_) {
    pending_final_ = false;
    startJob(true);
  }
}

void ReplayUpdater::updateNow() {
  if (!run_ || run_->trace().events.empty()) return;
  job_.wait();
  computing_ = false;
  pending_final_ = false;
  ++generation_;  // whatever was in flight is superseded by this result
  const bool final = !run_->isActive();
  const Job job = makeJob(final);
  replay_ = compute(job.experiment, *job.measured, job.steps_measured, job.final);
  events_replayed_ = static_cast<int>(run_->trace().events.size());
  if (final) measured_ = std::make_shared<Trace>();
  emit updated();
}

std::shared_ptr<const Replay> ReplayUpdater::compute(const Experiment& run_experiment,
                                                     const Trace& measured, int steps_measured,
                                                     bool final) {
  auto replay = std::make_shared<Replay>();
  replay->steps_measured = steps_measured;
  replay->batch_size = run_experiment.training.batch_size;
  replay->final = final;
  try {
    // Unmeasured ops fall back to a device profile: measured times are
    // seconds, so abstract unit costs would not mix with them.
    Experiment experiment = run_experiment;
    if (experiment.simulation.profile == "unit") experiment.simulation.profile = "cpu-core";
    const Prediction prediction = predict_experiment(experiment);
    replay->window_steps = std::max(1, prediction.schedule.steps);
    replay->result = replay_measured(prediction.schedule, measured, prediction.cost);
    replay->result.trace.source = "replayed";
  } catch (const std::exception& e) {
    replay->error = QString::fromStdString(e.what());
  }
  return replay;
}

}  // namespace pipelab
