// RunPairController: Run on a preset that compares two variants of one
// experiment (presets.h, Preset::compare_with: local against synced batch
// norm, say) trains both, one after the other, on the window's one
// RunController, then names the two rows of the RunStore to compare. Stop or
// Reset ends the pair; a first run that fails or is stopped leaves the second
// unstarted. No widgets: the window shows the comparison.
#pragma once

#include <QObject>
#include <QString>
#include <functional>
#include <optional>

#include "core/io/experiment.h"
#include "ui/models/run_controller.h"

namespace pipelab {

class RunStore;

struct RunPair {
  // What each run is called: its experiment's name, so the Runs menu, the
  // comparison's legend and a saved run file all say which variant it was.
  QString first_name;
  QString second_name;
  // The second experiment, made from the first as it is run, so an edit (say
  // fewer steps) applies to both runs. May throw ExperimentError (an
  // override that no longer applies); start() reports it.
  std::function<Experiment(Experiment)> second_from_first;
};

class RunPairController : public QObject {
  Q_OBJECT

 public:
  RunPairController(RunController* run, RunStore* store, QObject* parent = nullptr);

  // The pair Run trains; none: Run trains the one experiment, as usual. A
  // pair in progress goes on (the window resets the run before it changes the
  // experiment, and cancels the pair then).
  void setPair(std::optional<RunPair> pair) { pair_ = std::move(pair); }
  const std::optional<RunPair>& pair() const { return pair_; }

  // Starts the first run of `first`; the second follows when it finishes.
  // False, with one line in *error and nothing started, when either variant
  // is not a valid experiment.
  bool start(const Experiment& first, QString* error);
  // Ends the pair: the second run does not start. (The RunController stops the run.)
  void cancel();
  // Which of the pair's runs trains: 1 or 2, or 0 when no pair is on.
  int runningPart() const { return static_cast<int>(part_); }

 signals:
  // The first run finished (and is kept in the store); the second, called
  // `name`, starts.
  void secondStarted(const QString& name);
  // Both runs finished: their rows in the store.
  void finished(int first_row, int second_row);
  // The pair ended before both runs finished (a failure or Stop): why, in one line.
  void ended(const QString& reason);

 private:
  enum class Part { None = 0, First = 1, Second = 2 };
  void onRunPhaseChanged();
  // The run that just ended, as the store kept it: the newest row, if the store
  // grew since the run started; else -1 (nothing was recorded).
  int keptRow() const;
  void startRun(const Experiment& experiment);

  RunController* run_;
  RunStore* store_;
  std::optional<RunPair> pair_;
  RunPair running_;  // the pair in progress (pair_ may change meanwhile)
  Part part_ = Part::None;
  Experiment second_;
  int rows_before_ = 0;  // the store's size when the current run started
  int first_row_ = -1;
};

}  // namespace pipelab
