// TrainingView: loss and accuracy per training step (training batch and
// validation), growing live as steps finish and cut at the playback clock.
// A run that fails (diverged, out of memory) says why above the chart.
#pragma once

#include <QWidget>

class QCustomPlot;
class QCPGraph;

namespace pipelab {

class ProblemLabel;
class RunController;

class TrainingView : public QWidget {
  Q_OBJECT

 public:
  explicit TrainingView(QWidget* parent = nullptr);

  void setRunController(RunController* run);
  QCustomPlot* plot() const { return plot_; }
  // Steps plotted (loss points).
  int plottedStepCount() const;
  void setRunError(const QString& error);
  QString runError() const;

 public slots:
  // Redraws from the current data now (normally coalesced per event-loop turn).
  void rebuild();

 private:
  void scheduleRebuild();

  RunController* run_ = nullptr;
  QCustomPlot* plot_;
  QCPGraph* loss_;
  QCPGraph* val_loss_;
  QCPGraph* accuracy_;
  QCPGraph* val_accuracy_;
  ProblemLabel* error_label_;
  bool rebuild_pending_ = false;
  int shown_steps_ = -1;
};

}  // namespace pipelab
