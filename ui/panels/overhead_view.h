// OverheadView: GPipe's overhead breakdown as a chart. Per device, one stacked
// bar of the measured run and one of the prediction, each split into compute,
// recomputation, load imbalance and bubble (core/trace/overhead_breakdown.h),
// so a class sees where the time goes on 2 or 4 partitions, and whether the
// run does what the model predicts.
#pragma once

#include <QElapsedTimer>
#include <QWidget>
#include <memory>
#include <vector>

#include "core/io/experiment_prediction.h"
#include "core/trace/overhead_breakdown.h"

class QCustomPlot;
class QCPBars;

namespace pipelab {

class RunController;

class OverheadView : public QWidget {
  Q_OBJECT

 public:
  explicit OverheadView(QWidget* parent = nullptr);

  void setRunController(RunController* run);
  void setPrediction(std::shared_ptr<const Prediction> prediction);

  QCustomPlot* plot() const { return plot_; }
  // What the bars show (empty: nothing to show), for tests and exports.
  const std::vector<OverheadShares>& measuredShares() const { return measured_; }
  const std::vector<OverheadShares>& predictedShares() const { return predicted_; }

 public slots:
  void rebuild();

 private:
  RunController* run_ = nullptr;
  std::shared_ptr<const Prediction> prediction_;
  std::vector<OverheadShares> measured_;
  std::vector<OverheadShares> predicted_;
  QCustomPlot* plot_;
  std::vector<QCPBars*> layers_;  // compute, recompute, load imbalance, bubble: bottom to top
  QElapsedTimer since_rebuild_;
};

}  // namespace pipelab
