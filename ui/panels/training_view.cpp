#include "ui/panels/training_view.h"

#include <qcustomplot.h>

#include <QTimer>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>

#include "ui/models/run_controller.h"
#include "ui/panels/expert_load_chart.h"
#include "ui/panels/problem_label.h"

namespace pipelab {

TrainingView::TrainingView(QWidget* parent) : QWidget(parent) {
  plot_ = new QCustomPlot(this);
  plot_->setObjectName(QStringLiteral("trainingPlot"));
  plot_->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
  plot_->axisRect()->setRangeDrag(Qt::Horizontal);
  plot_->axisRect()->setRangeZoom(Qt::Horizontal);
  plot_->xAxis->setLabel(tr("training step"));
  plot_->yAxis->setLabel(tr("loss"));
  plot_->yAxis2->setVisible(true);
  plot_->yAxis2->setLabel(tr("accuracy"));
  plot_->yAxis2->setRange(0, 1.05);
  plot_->legend->setVisible(true);
  plot_->legend->setFont(QFont(font().family(), 8));
  // Above the plot (inside the axes it hid the curves' ends in a dock a few
  // hundred pixels wide), two entries a line where they fit (fitLegend).
  plot_->axisRect()->insetLayout()->take(plot_->legend);
  plot_->plotLayout()->insertRow(0);
  plot_->plotLayout()->addElement(0, 0, plot_->legend);
  plot_->plotLayout()->setRowStretchFactor(0, 0.001);
  plot_->legend->setBorderPen(Qt::NoPen);
  plot_->legend->setMargins(QMargins(4, 2, 4, 0));

  const QColor loss_color(0x3b, 0x7d, 0xd8);
  const QColor accuracy_color(0xf0, 0x8c, 0x1a);
  loss_ = plot_->addGraph(plot_->xAxis, plot_->yAxis);
  loss_->setName(tr("loss (training batch)"));
  loss_->setPen(QPen(loss_color, 1.5));
  val_loss_ = plot_->addGraph(plot_->xAxis, plot_->yAxis);
  val_loss_->setName(tr("loss (validation)"));
  val_loss_->setPen(QPen(loss_color.darker(140), 1.5, Qt::DashLine));
  val_loss_->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, 5));
  accuracy_ = plot_->addGraph(plot_->xAxis, plot_->yAxis2);
  accuracy_->setName(tr("accuracy (training batch)"));
  QColor light_accuracy = accuracy_color;
  light_accuracy.setAlpha(120);
  accuracy_->setPen(QPen(light_accuracy, 1));
  val_accuracy_ = plot_->addGraph(plot_->xAxis, plot_->yAxis2);
  val_accuracy_->setName(tr("accuracy (validation)"));
  val_accuracy_->setPen(QPen(accuracy_color.darker(120), 2));
  val_accuracy_->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, 6));

  // Not the two-column legend's width: beside the expert load the dock may
  // be narrower, and the legend then takes one column (fitLegend).
  plot_->setMinimumSize(kMinimumPlotWidth, kMinimumPlotHeight);
  fitLegend();

  error_label_ = new ProblemLabel(this);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(2, 2, 2, 2);
  layout->addWidget(error_label_);
  layout->addWidget(plot_, 1);
  rebuild();
}

void TrainingView::resizeEvent(QResizeEvent* event) {
  QWidget::resizeEvent(event);
  fitLegend();
}

void TrainingView::fitLegend() {
  QCPLegend* legend = plot_->legend;
  const int wrap = legend->wrap();
  legend->setWrap(2);
  legend->setFillOrder(QCPLegend::foColumnsFirst, true);
  if (legend->minimumOuterSizeHint().width() > plot_->width()) {
    legend->setWrap(1);
    legend->setFillOrder(QCPLegend::foColumnsFirst, true);
  }
  if (legend->wrap() != wrap) plot_->replot(QCustomPlot::rpQueuedReplot);
}

void TrainingView::setRunController(RunController* run) {
  run_ = run;
  connect(run_, &RunController::traceReset, this, [this] {
    setRunError({});
    scheduleRebuild();
  });
  connect(run_, &RunController::traceGrew, this, [this](int, int, int first_step) {
    if (first_step < static_cast<int>(run_->trace().steps.size())) scheduleRebuild();
  });
  connect(run_, &RunController::playbackMoved, this, &TrainingView::scheduleRebuild);
  scheduleRebuild();  // what the run already holds
}

void TrainingView::setExpertLoadChart(ExpertLoadChart* chart) {
  expert_load_ = chart;
  shown_steps_ = -1;  // draw the latest step on it, even if the loss has it already
  scheduleRebuild();
}

void TrainingView::setRunError(const QString& error) {
  error_label_->setProblems(error.isEmpty() ? QStringList{} : QStringList{error});
}

QString TrainingView::runError() const {
  return error_label_->problems().isEmpty() ? QString() : error_label_->problems().first();
}

int TrainingView::plottedStepCount() const { return loss_->dataCount(); }

void TrainingView::scheduleRebuild() {
  if (rebuild_pending_) return;
  rebuild_pending_ = true;
  QTimer::singleShot(0, this, [this] {
    rebuild_pending_ = false;
    rebuild();
  });
}

void TrainingView::rebuild() {
  QVector<double> steps, losses, val_steps, val_losses, acc_steps, accuracies, val_acc_steps,
      val_accuracies;
  int shown = 0;
  const StepMetrics* latest = nullptr;
  if (run_) {
    const double now = run_->playbackTime();
    for (const StepMetrics& metrics : run_->trace().steps) {
      if (metrics.t_end > now) continue;
      ++shown;
      latest = &metrics;
      // Steps count from 1 on the axis: "after step 1".
      const double x = metrics.step + 1;
      if (std::isfinite(metrics.loss)) {
        steps << x;
        losses << metrics.loss;
      }
      if (std::isfinite(metrics.val_loss)) {
        val_steps << x;
        val_losses << metrics.val_loss;
      }
      if (std::isfinite(metrics.accuracy)) {
        acc_steps << x;
        accuracies << metrics.accuracy;
      }
      if (std::isfinite(metrics.val_accuracy)) {
        val_acc_steps << x;
        val_accuracies << metrics.val_accuracy;
      }
    }
  }
  if (shown == shown_steps_) return;  // nothing new to draw
  shown_steps_ = shown;
  if (expert_load_) expert_load_->showStep(latest);
  loss_->setData(steps, losses, true);
  val_loss_->setData(val_steps, val_losses, true);
  accuracy_->setData(acc_steps, accuracies, true);
  val_accuracy_->setData(val_acc_steps, val_accuracies, true);

  const int total = run_ ? std::max(run_->stepsTotal(), 1) : 1;
  plot_->xAxis->setRange(0, std::max<double>(total, shown) + 1);
  double top = 0;
  for (double value : losses) top = std::max(top, value);
  for (double value : val_losses) top = std::max(top, value);
  plot_->yAxis->setRange(0, top > 0 ? top * 1.1 : 1.0);
  plot_->replot(QCustomPlot::rpQueuedReplot);
}

}  // namespace pipelab
