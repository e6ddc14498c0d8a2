// OverheadView: GPipe's overhead breakdown as a chart. Per device, one stacked
// bar of the measured run and one of the prediction, each split into compute,
// recomputation, collectives, load imbalance and bubble
// (core/trace/overhead_breakdown.h),
// so a class sees where the time goes on 2 or 4 partitions, and whether the
// run does what the model predicts; a dashed line marks where the schedule's
// textbook bubble would begin.
#pragma once

#include <QWidget>
#include <limits>
#include <memory>
#include <vector>

#include "core/io/experiment.h"
#include "core/sim/experiment_prediction.h"
#include "core/trace/overhead_breakdown.h"
#include "ui/models/refresh_throttle.h"

class QCustomPlot;
class QCPBars;
class QCPGraph;

namespace pipelab {

class RunController;

class OverheadView : public QWidget {
  Q_OBJECT

 public:
  explicit OverheadView(QWidget* parent = nullptr);

  void setRunController(RunController* run);
  // The experiment gives the schedule's bubble formula, drawn as a line.
  void setPrediction(std::shared_ptr<const Prediction> prediction, const Experiment& experiment);

  QCustomPlot* plot() const { return plot_; }
  // The formula's bubble the dashed line marks (NaN: none for this plan).
  double formulaBubble() const { return formula_bubble_; }
  // What the bars show (empty: nothing to show), for tests and exports.
  const std::vector<OverheadShares>& measuredShares() const { return measured_; }
  const std::vector<OverheadShares>& predictedShares() const { return predicted_; }

 public slots:
  void rebuild();

 private:
  void applyTickLabels();

  // A bar's place on the axis, its label ("3 M": device 3, measured) and device.
  struct Tick {
    double key;
    QString label;
    int device;
  };
  static constexpr int kLabelSpacing = 8;  // pixels between two labels, at least

  RunController* run_ = nullptr;
  std::shared_ptr<const Prediction> prediction_;
  std::vector<OverheadShares> measured_;
  std::vector<OverheadShares> predicted_;
  QCustomPlot* plot_;
  std::vector<QCPBars*> layers_;
  QCPGraph* formula_line_;
  double formula_bubble_ = std::numeric_limits<double>::quiet_NaN();
  QString formula_text_;  // the formula with the plan's numbers, for the legend
  std::vector<Tick> ticks_;
  int bars_per_device_ = 0;  // 2 with a run and a prediction
  int labelled_every_ = 0;   // every n-th device labelled; 0: not chosen yet
  // A live run's bars move slowly, and the trace can be long: at most every 500 ms.
  RefreshThrottle throttle_{500};
};

}  // namespace pipelab
