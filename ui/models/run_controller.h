// RunController: one training run as the window sees it. It builds the
// executor on a worker thread (loading data can take a moment), starts,
// pauses, steps and stops it, drains its EventSink on a timer (30 Hz) into
// the measured Trace, and keeps the playback clock: the time up to which the
// views show the recorded events. At speed 1 the clock runs with the wall
// clock; at 0.001 a millisecond-long step unfolds over a second; "live" keeps
// it at the newest event. Training never runs on the GUI thread.
#pragma once

#include <QElapsedTimer>
#include "ui/models/background_job.h"
#include <QObject>
#include <QString>
#include <QTimer>
#include <memory>
#include <optional>

#include "core/io/experiment.h"
#include "core/runtime/executor.h"
#include "core/trace/event_sink.h"
#include "core/trace/trace_events.h"
#include "ui/models/problem_routing.h"

namespace pipelab {

class RunController : public QObject {
  Q_OBJECT

 public:
  enum class Phase { Idle, Preparing, Running, Paused, Finished, Stopped, Failed };
  static constexpr int kDrainIntervalMs = 33;
  // Events and memory samples a run keeps: about 90 bytes each in memory, so
  // under 400 MB, and a saved run stays well inside what a run file may take.
  // The presets record about 100,000; a long run of thousands of
  // micro-batches records hundreds of times more. Past this the timeline and
  // memory curves stop while the loss curve and statistics of every step go
  // on, and recordingLimitReached() says so.
  static constexpr int64_t kDefaultRecordLimit = 4'000'000;
  static constexpr double kLive = 0;  // playback speed that follows the newest event

  explicit RunController(QObject* parent = nullptr);
  ~RunController() override;

  // Starts a new run of `experiment` (the measured trace starts empty).
  // `steps` 0 runs training.steps. With `paused`, the run waits before its
  // first op, so step() can walk through it.
  void start(const Experiment& experiment, int steps = 0, bool paused = false);
  // Follows a run that trains elsewhere (pipelab-cli train --serve, e.g. rank
  // 0 of an mpirun job) at `address` ("HOST:PORT"): its timeline, memory and
  // loss arrive as a local run's; pause and step do nothing, stop detaches.
  // attached() says which experiment it trains once connected.
  void attach(const QString& address);
  void pause();
  void resume();
  // Runs one more training step, then pauses. Needs a paused (or preparing) run.
  void step();
  // Stops the run within one op; the recorded trace stays.
  void stop();
  // Stops any run and clears the measured trace: back to Idle.
  void reset();

  Phase phase() const { return phase_; }
  // Preparing, Running or Paused: a run exists that can still do something.
  bool isActive() const;
  static QString phaseName(Phase phase);

  const Trace& trace() const { return trace_; }
  const Experiment& experiment() const { return experiment_; }
  int stepsDone() const;
  int stepsTotal() const;
  QString errorText() const { return error_; }

  // Newest recorded time (seconds from the run's start).
  double recordedTime() const { return recorded_time_; }
  // What the views show: every event that began before this time.
  double playbackTime() const { return playback_time_; }
  void setPlaybackSpeed(double speed);
  double playbackSpeed() const { return playback_speed_; }
  // Jumps the playback clock to the newest event.
  void catchUp();
  // Events plus memory samples kept per run (tests make it small).
  void setRecordLimit(int64_t records) { record_limit_ = records; }
  // The current run reached the limit: later events and samples were dropped.
  bool recordingLimited() const { return recording_limited_; }

 signals:
  void phaseChanged(RunController::Phase phase);
  // The measured trace was cleared (a new run or a reset).
  void traceReset();
  // New events, memory samples or step metrics were appended; the arguments
  // are the first new index of each vector of trace().
  void traceGrew(int first_event, int first_memory, int first_step);
  void playbackMoved(double time);
  // The run reached the record limit (once per run); `text` says what stops.
  void recordingLimitReached(const QString& text);
  // Progress notes from the executor.
  void message(const QString& text);
  // attach() connected: the experiment the run trains.
  void attached(const Experiment& experiment);
  // The run could not start or stopped with an error; `area` says which panel
  // holds the cause.
  void failed(const QString& reason, ProblemArea area);

 private:
  // What the worker thread hands back. The sink is declared first so the
  // executor, which pushes into it, is destroyed before it. Not assignable:
  // assigning replaces the sink first, and the old executor's destructor
  // would then write to a freed sink.
  struct Prepared {
    Prepared() = default;
    Prepared(Prepared&&) = default;
    Prepared& operator=(Prepared&&) = delete;
    int generation = 0;
    std::shared_ptr<EventSink> sink;
    std::shared_ptr<Executor> executor;
    std::optional<Experiment> attached;  // attach(): what the run trains
    QString error;
    ProblemArea area = ProblemArea::Run;
  };

  // Clears the last run and enters Preparing; the new run's generation.
  int beginPreparing();
  void onPrepared();
  void tick();
  void drainSink();
  void advancePlayback();
  void setPhase(Phase phase);
  void updatePhaseFromExecutor();
  void updatePhaseFromState(RunState state);
  void discardExecutor();

  Phase phase_ = Phase::Idle;
  Experiment experiment_;
  std::shared_ptr<EventSink> sink_;  // declared before executor_: outlives it
  std::shared_ptr<Executor> executor_;
  int generation_ = 0;  // which start() a finished preparation belongs to
  BackgroundJob<Prepared> preparing_{this, [this] { onPrepared(); }};
  bool stop_requested_ = false;   // stop() while preparing
  bool pause_requested_ = false;  // pause() while preparing
  int steps_requested_ = 0;       // step() calls while preparing
  Trace trace_;
  QString error_;
  QTimer timer_;
  QElapsedTimer wall_clock_;
  double recorded_time_ = 0;
  double playback_time_ = 0;
  double playback_speed_ = kLive;
  int64_t record_limit_ = kDefaultRecordLimit;
  bool recording_limited_ = false;
};

}  // namespace pipelab
