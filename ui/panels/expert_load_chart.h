// ExpertLoadChart: a Mixture-of-Experts run's per-expert load in one step,
// as stacked bars per expert of each moe layer: the tokens it kept and the
// ones dropped for lack of capacity. Hidden when the step has no moe layer;
// the main window gives it a dock of its own beside the loss, which shows and
// hides with it (under the loss, both were too short to read).
#pragma once

#include <qcustomplot.h>

#include "core/trace/trace_events.h"

namespace pipelab {

class ExpertLoadChart : public QCustomPlot {
  Q_OBJECT

 public:
  explicit ExpertLoadChart(QWidget* parent = nullptr);

  // Draws `metrics`' expert load (null, or a step without one: hides the chart).
  void showStep(const StepMetrics* metrics);
  int barCount() const;         // experts drawn, over every moe layer
  double droppedShown() const;  // tokens drawn as dropped, over every expert

 signals:
  // The chart went from hidden to shown or back (its dock follows).
  void shownChanged(bool shown);

 private:
  void setShown(bool shown);
  void keepBarsUnderLegend();

  QCPBars* kept_;
  QCPBars* dropped_;
  double tallest_ = 0;  // the tallest bar shown (tokens kept + dropped)
};

}  // namespace pipelab
