#include "ui/models/run_controller.h"

#include <algorithm>
#include <exception>

#include "core/cli/run_prediction.h"
#include "core/data/dataset.h"
#include "core/live/attached_run.h"
#include "core/io/experiment_io.h"

namespace pipelab {
namespace {

// A measured trace before its first event: who the devices are, what runs.
Trace empty_measured_trace(const Experiment& experiment) {
  Trace trace;
  // Built from std::string values: GCC 12 warns falsely (-Wrestrict) on
  // assigning short literals here.
  trace.source = std::string("measured");
  trace.time_unit = std::string("s");
  trace.schedule = std::string(schedule_name(experiment.parallel.schedule));
  try {
    const ParallelPlan& plan = experiment.parallel;
    trace.devices = describe_devices(plan.dp, plan.tp, plan.pp, plan.chunks, plan.layout().v_shape, plan.cp);
  } catch (const std::exception&) {
    // The executor reports a bad plan in its own words.
  }
  return trace;
}

}  // namespace

RunController::RunController(QObject* parent) : QObject(parent) {
  timer_.setInterval(kDrainIntervalMs);
  connect(&timer_, &QTimer::timeout, this, &RunController::tick);
}

RunController::~RunController() {
  // The preparation thread holds the sink and the executor it builds; let it
  // finish so nothing outlives the application.
  preparing_.wait();
  discardExecutor();
}

bool RunController::isActive() const {
  return phase_ == Phase::Preparing || phase_ == Phase::Running || phase_ == Phase::Paused;
}

QString RunController::phaseName(Phase phase) {
  switch (phase) {
    case Phase::Idle:
      return tr("ready");
    case Phase::Preparing:
      return tr("preparing");
    case Phase::Running:
      return tr("running");
    case Phase::Paused:
      return tr("paused");
    case Phase::Finished:
      return tr("finished");
    case Phase::Stopped:
      return tr("stopped");
    case Phase::Failed:
      return tr("failed");
  }
  return {};
}

int RunController::stepsDone() const {
  if (executor_) return executor_->steps_done();
  return static_cast<int>(trace_.steps.size());
}

int RunController::stepsTotal() const {
  if (executor_) return executor_->steps_total();
  return experiment_.training.steps;
}

int RunController::beginPreparing() {
  discardExecutor();
  error_.clear();
  recorded_time_ = 0;
  playback_time_ = 0;
  stop_requested_ = false;
  pause_requested_ = false;
  steps_requested_ = 0;
  recording_limited_ = false;
  emit traceReset();
  sink_ = std::make_shared<EventSink>();
  const int generation = ++generation_;
  setPhase(Phase::Preparing);
  return generation;
}

void RunController::start(const Experiment& experiment, int steps, bool paused) {
  experiment_ = experiment;
  trace_ = empty_measured_trace(experiment);
  const int generation = beginPreparing();
  ExecutorOptions options;
  options.steps = steps;
  options.start_paused = paused;
  // Loading data and building the stages can take a moment: off the GUI thread.
  preparing_.start([experiment, options, generation, sink = sink_] {
    Prepared prepared;
    prepared.generation = generation;
    prepared.sink = sink;
    try {
      ExecutorOptions predicted = options;
      predicted.prediction = predict_run(experiment);
      prepared.executor = make_executor(experiment, *sink, predicted);
    } catch (const DataError& e) {
      prepared.error = QString::fromStdString(e.what());
      prepared.area = ProblemArea::Data;
    } catch (const ExperimentError& e) {
      prepared.error = QString::fromStdString(e.what());
      prepared.area = problem_area(prepared.error);
    } catch (const std::exception& e) {
      prepared.error = QString::fromStdString(e.what());
      prepared.area = problem_area(prepared.error);
    }
    return prepared;
  });
}

void RunController::attach(const QString& address) {
  trace_ = Trace{};  // the devices are known once the run says what it trains
  const int generation = beginPreparing();
  // Connecting can take a moment: off the GUI thread.
  preparing_.start([address = address.toStdString(), generation, sink = sink_] {
    Prepared prepared;
    prepared.generation = generation;
    prepared.sink = sink;
    try {
      auto run = std::make_shared<AttachedRun>(address, *sink);
      prepared.attached = run->experiment();
      prepared.executor = std::move(run);
    } catch (const std::exception& e) {
      prepared.error = QString::fromStdString(e.what());
    }
    return prepared;
  });
}

void RunController::onPrepared() {
  const std::optional<Prepared> taken = preparing_.take();
  if (!taken) return;  // a newer start's result, already taken
  const Prepared& prepared = *taken;
  if (prepared.generation != generation_) return;  // a reset or a newer start won
  if (!prepared.error.isEmpty()) {
    error_ = prepared.error;
    setPhase(Phase::Failed);
    emit failed(error_, prepared.area);
    return;
  }
  if (stop_requested_) {
    setPhase(Phase::Stopped);
    return;
  }
  executor_ = prepared.executor;
  if (prepared.attached) {
    experiment_ = *prepared.attached;
    trace_ = empty_measured_trace(experiment_);
    emit traceReset();
    emit attached(experiment_);
  }
  try {
    executor_->start();
    if (pause_requested_) executor_->pause();
    if (steps_requested_ > 0) executor_->step();
  } catch (const std::exception& e) {
    error_ = QString::fromStdString(e.what());
    setPhase(Phase::Failed);
    emit failed(error_, problem_area(error_));
    return;
  }
  wall_clock_.start();
  timer_.start();
  updatePhaseFromExecutor();
}

void RunController::pause() {
  if (phase_ == Phase::Preparing) {
    pause_requested_ = true;
    return;
  }
  if (!executor_ || phase_ != Phase::Running) return;
  executor_->pause();
  updatePhaseFromExecutor();
}

void RunController::resume() {
  if (phase_ == Phase::Preparing) {
    pause_requested_ = false;
    return;
  }
  if (!executor_ || phase_ != Phase::Paused) return;
  executor_->resume();
  if (!timer_.isActive()) {
    wall_clock_.start();
    timer_.start();
  }
  updatePhaseFromExecutor();
}

void RunController::step() {
  if (phase_ == Phase::Preparing) {
    ++steps_requested_;
    return;
  }
  if (!executor_ || phase_ != Phase::Paused) return;
  executor_->step();
  if (!timer_.isActive()) {
    wall_clock_.start();
    timer_.start();
  }
  updatePhaseFromExecutor();
}

void RunController::stop() {
  if (phase_ == Phase::Preparing) {
    stop_requested_ = true;
    ++generation_;  // the preparation's result is dropped when it arrives
    setPhase(Phase::Stopped);
    return;
  }
  if (!executor_ || !isActive()) return;
  executor_->stop();  // returns once every worker has joined: within one op
  tick();
}

void RunController::reset() {
  ++generation_;
  discardExecutor();
  trace_ = Trace{};  // no run, no devices: the views show their empty state
  recording_limited_ = false;
  error_.clear();
  recorded_time_ = 0;
  playback_time_ = 0;
  setPhase(Phase::Idle);  // first, so the views redraw their idle state
  emit traceReset();
  emit playbackMoved(playback_time_);
}

void RunController::discardExecutor() {
  timer_.stop();
  if (executor_) {
    const RunState state = executor_->state();
    if (state == RunState::Running || state == RunState::Paused || state == RunState::Ready)
      executor_->stop();
  }
  executor_.reset();  // before the sink it pushes into
  sink_.reset();
}

void RunController::setPlaybackSpeed(double speed) {
  playback_speed_ = std::max(0.0, speed);
  if (playback_speed_ == kLive) catchUp();
  // The clock may have stopped at the end of a slow replay; resume animating.
  if (playback_time_ < recorded_time_ && !timer_.isActive()) {
    wall_clock_.start();
    timer_.start();
  }
}

void RunController::catchUp() {
  if (playback_time_ == recorded_time_) return;
  playback_time_ = recorded_time_;
  emit playbackMoved(playback_time_);
}

void RunController::tick() {
  // Read the state before draining: once it is final, everything the workers
  // pushed is already in the sink, so this drain is the last one needed.
  if (executor_) {
    const RunState state = executor_->state();
    drainSink();
    updatePhaseFromState(state);
  }
  advancePlayback();
  if (!isActive() && playback_time_ >= recorded_time_) timer_.stop();
}

void RunController::drainSink() {
  if (!sink_) return;
  EventBatch batch = sink_->drain();
  if (batch.empty()) return;
  const auto kept = static_cast<int64_t>(trace_.events.size() + trace_.memory.size());
  const auto added = static_cast<int64_t>(batch.events.size() + batch.memory.size());
  if (added > 0 && kept + added > record_limit_) {
    batch.events.clear();
    batch.memory.clear();
    if (!recording_limited_) {
      recording_limited_ = true;
      emit recordingLimitReached(
          tr("The timeline and memory curves stop at %1 million recorded ops and memory samples, "
             "to keep the app's memory in bounds; the loss and the statistics of every step go "
             "on. Fewer steps or micro-batches show the whole run.")
              .arg(record_limit_ / 1e6, 0, 'g', 3));
    }
  }
  const int first_event = static_cast<int>(trace_.events.size());
  const int first_memory = static_cast<int>(trace_.memory.size());
  const int first_step = static_cast<int>(trace_.steps.size());
  append_batch(trace_, batch);
  for (const TraceEvent& event : batch.events)
    recorded_time_ = std::max(recorded_time_, event.t_end);
  for (const MemorySample& sample : batch.memory)
    recorded_time_ = std::max(recorded_time_, sample.t);
  for (const StepMetrics& metrics : batch.steps)
    recorded_time_ = std::max(recorded_time_, metrics.t_end);
  for (const std::string& text : batch.messages) emit message(QString::fromStdString(text));
  emit traceGrew(first_event, first_memory, first_step);
}

void RunController::advancePlayback() {
  const double wall_seconds = wall_clock_.isValid() ? wall_clock_.nsecsElapsed() * 1e-9 : 0.0;
  wall_clock_.restart();
  const double before = playback_time_;
  if (playback_speed_ == kLive) {
    playback_time_ = recorded_time_;
  } else {
    playback_time_ = std::min(recorded_time_, playback_time_ + wall_seconds * playback_speed_);
  }
  if (playback_time_ != before) emit playbackMoved(playback_time_);
}

void RunController::updatePhaseFromExecutor() {
  if (executor_) updatePhaseFromState(executor_->state());
}

void RunController::updatePhaseFromState(RunState state) {
  Phase phase = phase_;
  switch (state) {
    case RunState::Ready:
    case RunState::Paused:
      phase = Phase::Paused;
      break;
    case RunState::Running:
      phase = Phase::Running;
      break;
    case RunState::Finished:
      phase = Phase::Finished;
      break;
    case RunState::Stopped:
      phase = Phase::Stopped;
      break;
    case RunState::Failed:
      phase = Phase::Failed;
      break;
  }
  if (phase == phase_) return;
  // A final state's events are all in the sink (the state was read first):
  // the phase and the last events arrive together, never the phase alone.
  if (phase == Phase::Finished || phase == Phase::Stopped || phase == Phase::Failed) drainSink();
  if (phase == Phase::Failed) {
    error_ = QString::fromStdString(executor_->error());
    if (error_.isEmpty()) error_ = tr("the run failed without saying why");
  }
  setPhase(phase);
  if (phase == Phase::Failed) emit failed(error_, problem_area(error_));
}

void RunController::setPhase(Phase phase) {
  if (phase == phase_) return;
  phase_ = phase;
  emit phaseChanged(phase_);
}

}  // namespace pipelab
