// ReplayUpdater: keeps the replayed timeline of the current run: the measured
// op durations laid out on the schedule's dependencies by the simulator (see
// core/sim/replay.h), one core per device. On a laptop with fewer cores
// than virtual devices this is the shape to compare with the prediction.
//
// It replays on a worker thread when a run finishes, stops or fails, and
// every few seconds while a long run records (the events so far). The
// schedule comes from the experiment the run started with, not later edits.
#pragma once

#include "ui/models/background_job.h"
#include <QObject>
#include <QString>
#include <QTimer>
#include <algorithm>
#include <memory>

#include "core/io/experiment.h"
#include "core/sim/simulator.h"
#include "core/trace/trace_events.h"

namespace pipelab {

class RunController;

// One replay: the simulated result and what it says per training step.
struct Replay {
  SimulationResult result;  // result.trace.source == "replayed", seconds
  int window_steps = 1;     // training steps the replayed window holds
  int steps_measured = 0;   // measured steps the durations were averaged over
  int batch_size = 0;       // samples per training step
  bool final = false;       // the run had ended (no newer replay will come)
  QString error;            // why there is no result (result is then empty)

  double stepTime() const { return result.makespan / std::max(1, window_steps); }
};

class ReplayUpdater : public QObject {
  Q_OBJECT

 public:
  static constexpr int kLiveIntervalMs = 3000;

  explicit ReplayUpdater(QObject* parent = nullptr);
  ~ReplayUpdater() override;

  void setRunController(RunController* run);
  // How long a run records between live replays (tests shorten it).
  void setLiveInterval(int ms) { live_timer_.setInterval(ms); }

  // The latest replay of the current run; null before one is ready.
  std::shared_ptr<const Replay> replay() const { return replay_; }
  // A replay is being computed on the worker thread.
  bool isComputing() const { return computing_; }

  // Replays the run's trace now, on the calling thread (headless exports).
  void updateNow();

  // The replay of `measured` (its events and devices; `steps_measured` whole
  // steps) on the schedule of `experiment`: what the worker computes.
  static std::shared_ptr<const Replay> compute(const Experiment& experiment, const Trace& measured,
                                               int steps_measured, bool final);

 signals:
  // replay() changed (a new result, or none after a reset).
  void updated();

 private:
  struct Job;
  void onTraceReset();
  void onPhaseChanged();
  void requestLive();
  void startJob(bool final);
  void onJobFinished();
  Job makeJob(bool final);

  RunController* run_ = nullptr;
  std::shared_ptr<const Replay> replay_;
  BackgroundJob<std::shared_ptr<const Replay>> job_{this, [this] { onJobFinished(); }};
  int generation_ = 0;           // bumped by each reset: drops stale results
  int job_generation_ = 0;       // the generation of the job in flight
  bool job_final_ = false;       // the job in flight replays an ended run
  bool computing_ = false;       // a job was started and its result not yet taken
  bool pending_final_ = false;   // the run ended while a live job was in flight
  int events_replayed_ = 0;      // trace events the newest job saw
  // The run's events as the jobs read them. Each job adds only what was
  // recorded since the last one, so during a long run the GUI thread copies
  // a few seconds of events, not the whole trace. Only the GUI thread writes
  // it, and only while no job is computing; a reset starts a new one (a job
  // still in flight keeps the old one alive), and so does a final replay (a
  // finished run needs no second copy of its events).
  std::shared_ptr<Trace> measured_ = std::make_shared<Trace>();
  QTimer live_timer_;            // debounces replays during a run
};

}  // namespace pipelab
