// TrainingView: loss and accuracy per training step (training batch and
// validation), growing live as steps finish and cut at the playback clock.
// For a Mixture-of-Experts model it also feeds the latest step's per-expert
// load to an ExpertLoadChart shown elsewhere (setExpertLoadChart).
// A run that fails (diverged, out of memory) says why above the chart.
#pragma once

#include <QPointer>
#include <QWidget>

#include "ui/panels/expert_load_chart.h"

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
  // The chart that shows the latest step's expert load (not owned; may be null).
  void setExpertLoadChart(ExpertLoadChart* chart);
  ExpertLoadChart* expertLoadChart() const { return expert_load_; }
  // Steps plotted (loss points).
  int plottedStepCount() const;
  void setRunError(const QString& error);
  QString runError() const;

 public slots:
  // Redraws from the current data now (normally coalesced per event-loop turn).
  void rebuild();

 protected:
  void resizeEvent(QResizeEvent* event) override;

 private:
  static constexpr int kMinimumPlotWidth = 200;
  static constexpr int kMinimumPlotHeight = 150;

  void scheduleRebuild();
  // Two legend entries a line (loss, then accuracy) where the plot is wide
  // enough for them, else one.
  void fitLegend();

  RunController* run_ = nullptr;
  QCustomPlot* plot_;
  QCPGraph* loss_;
  QCPGraph* val_loss_;
  QCPGraph* accuracy_;
  QCPGraph* val_accuracy_;
  QPointer<ExpertLoadChart> expert_load_;
  ProblemLabel* error_label_;
  bool rebuild_pending_ = false;
  int shown_steps_ = -1;
};

}  // namespace pipelab
