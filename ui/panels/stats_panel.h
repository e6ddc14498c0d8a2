// StatsPanel: the numbers behind the charts. The measured bubble fraction next
// to the replayed and the simulated one, and the schedule's textbook formula with the current p
// and m filled in; step time (measured, replayed, predicted) and samples per second; and per device
// its utilisation (busy share of the run) and peak memory, measured and predicted. Measured numbers
// leave the first (warm-up) step out, as core/trace/run_statistics.h says.
#pragma once

#include <QWidget>
#include <memory>

#include "core/io/experiment.h"
#include "core/sim/experiment_prediction.h"
#include "ui/models/refresh_throttle.h"
#include "ui/models/replay_updater.h"

class QLabel;
class QTableWidget;

namespace pipelab {

class RunController;

class StatsPanel : public QWidget {
  Q_OBJECT

 public:
  explicit StatsPanel(QWidget* parent = nullptr);

  void setRunController(RunController* run);
  void setPrediction(std::shared_ptr<const Prediction> prediction, const Experiment& experiment);
  // The current run's replay (null: none yet).
  void setReplay(std::shared_ptr<const Replay> replay);

  // The texts shown, for tests and exports.
  QString bubbleText() const;
  QString formulaText() const;
  QString throughputText() const;
  QTableWidget* deviceTable() const { return table_; }

 private:
  void refresh();

  RunController* run_ = nullptr;
  std::shared_ptr<const Prediction> prediction_;
  std::shared_ptr<const Replay> replay_;
  Experiment experiment_;
  QLabel* bubble_label_;
  QLabel* formula_label_;
  QLabel* throughput_label_;
  QTableWidget* table_;
  RefreshThrottle throttle_{250};  // during a run
};

}  // namespace pipelab
