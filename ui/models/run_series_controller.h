// RunSeriesController: Run on a preset that compares variants of one
// experiment (presets.h, Preset::compare: local against synced batch norm,
// ZeRO stages 0 to 3, GPipe, PipeDream and PipeMare) trains them all, one
// after another, on the window's one RunController, then names their rows of
// the RunStore to compare. Stop or Reset ends the series; a run that fails or
// is stopped leaves the later ones unstarted. No widgets: the window shows the
// comparison.
#pragma once

#include <QList>
#include <QObject>
#include <QString>
#include <functional>
#include <optional>
#include <vector>

#include "core/io/experiment.h"
#include "ui/models/run_controller.h"

namespace pipelab {

class RunStore;

// The most runs one comparison shows side by side (CompareView's slots).
inline constexpr int kMaxComparedRuns = 4;

struct RunVariant {
  // What the run is called: its experiment's name, so the Runs menu, the
  // comparison's legend and a saved run file all say which variant it was.
  QString name;
  // The variant, made from the first experiment as it is run, so an edit (say
  // fewer steps) applies to every run; the identity for the first. May throw
  // ExperimentError (an override that no longer applies); start() reports it.
  std::function<Experiment(Experiment)> from_first;
};

struct RunSeries {
  std::vector<RunVariant> runs;  // 2 .. kMaxComparedRuns, the first run first
};

class RunSeriesController : public QObject {
  Q_OBJECT

 public:
  RunSeriesController(RunController* run, RunStore* store, QObject* parent = nullptr);

  // The series Run trains; none: Run trains the one experiment, as usual. A
  // series in progress goes on (the window resets the run before it changes
  // the experiment, and cancels the series then).
  void setSeries(std::optional<RunSeries> series) { series_ = std::move(series); }
  const std::optional<RunSeries>& series() const { return series_; }

  // Starts the first run of `first`; each next one follows when the one
  // before finishes. False, with one line in *error and nothing started, when
  // any variant is not a valid experiment.
  bool start(const Experiment& first, QString* error);
  // Ends the series: no further run starts. (The RunController stops the run.)
  void cancel();
  // Which of the series' runs trains, from 1, or 0 when no series is on; and
  // how many it has.
  int runningPart() const { return part_; }
  int runCount() const { return static_cast<int>(experiments_.size()); }

 signals:
  // The run before finished (and is kept in the store); run `part` (from 1),
  // called `name`, starts.
  void nextStarted(int part, const QString& name);
  // Every run finished: their rows in the store, in the series' order.
  void finished(const QList<int>& rows);
  // The series ended before every run finished (a failure or Stop): why, in one line.
  void ended(const QString& reason);

 private:
  void onRunPhaseChanged();
  // The run that just ended, as the store kept it: the newest row, if the store
  // grew since the run started; else -1 (nothing was recorded).
  int keptRow() const;
  void startRun(int index);

  RunController* run_;
  RunStore* store_;
  std::optional<RunSeries> series_;
  std::vector<Experiment> experiments_;  // the series in progress, named
  int part_ = 0;                         // 1-based; 0: none
  int rows_before_ = 0;                  // the store's size when the current run started
  QList<int> rows_;                      // the finished runs' rows
};

}  // namespace pipelab
