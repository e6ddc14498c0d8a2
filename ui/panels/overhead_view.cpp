#include "ui/panels/overhead_view.h"

#include <qcustomplot.h>

#include <QVBoxLayout>
#include <cmath>

#include "core/sim/bubble_formula.h"
#include "ui/models/run_controller.h"
#include "ui/timeline/op_colors.h"

namespace pipelab {
namespace {


// One stacked layer: its legend text, its colour and its share.
struct Layer {
  const char* text;
  QColor color;
  double OverheadShares::*share;
};
const Layer kLayers[] = {
    {QT_TRANSLATE_NOOP("pipelab::OverheadView", "compute"), op_role_color(OpColorRole::Forward),
     &OverheadShares::compute},
    {QT_TRANSLATE_NOOP("pipelab::OverheadView", "recomputation"),
     op_role_color(OpColorRole::Recompute), &OverheadShares::recompute},
    {QT_TRANSLATE_NOOP("pipelab::OverheadView", "collectives\n(all-reduce, RS, AG, A2A)"),
     op_role_color(OpColorRole::AllReduce), &OverheadShares::collectives},
    {QT_TRANSLATE_NOOP("pipelab::OverheadView", "load imbalance"), QColor(0xc8, 0xb8, 0x6b),
     &OverheadShares::load_imbalance},
    {QT_TRANSLATE_NOOP("pipelab::OverheadView", "bubble"), bubble_color(), &OverheadShares::bubble},
};

}  // namespace

OverheadView::OverheadView(QWidget* parent) : QWidget(parent) {
  plot_ = new QCustomPlot(this);
  plot_->plotLayout()->insertRow(0);
  plot_->plotLayout()->addElement(
      0, 0,
      new QCPTextElement(plot_, tr("Where the time goes (share of the run, per device)"),
                         QFont(font().family(), 10, QFont::Bold)));
  plot_->yAxis->setRange(0, 1);
  plot_->yAxis->setLabel(tr("share of the run"));
  QSharedPointer<QCPAxisTickerFixed> percent(new QCPAxisTickerFixed);
  percent->setTickStep(0.25);
  plot_->yAxis->setTicker(percent);
  plot_->xAxis->grid()->setVisible(false);
  plot_->xAxis->setTickLength(0, 0);
  plot_->xAxis->setSubTicks(false);
  QCPBars* below = nullptr;
  for (const Layer& layer : kLayers) {
    auto* bars = new QCPBars(plot_->xAxis, plot_->yAxis);
    bars->setName(tr(layer.text));
    bars->setBrush(layer.color);
    // No outline: a share of 0 would still draw its outline, a line of its
    // colour across the bar.
    bars->setPen(Qt::NoPen);
    bars->setWidth(0.8);
    if (below) bars->moveAbove(below);
    below = bars;
    layers_.push_back(bars);
  }
  // Where the schedule's textbook bubble would begin: a dashed line at
  // 1 - formula, so the bubble band above it can be held against the formula.
  formula_line_ = new QCPGraph(plot_->xAxis, plot_->yAxis);
  formula_line_->setPen(QPen(Qt::black, 1.5, Qt::DashLine));
  // The legend in a column of its own beside the bars, so it never hides one
  // and the bars keep the dock's height.
  plot_->legend->setVisible(true);
  plot_->legend->setBorderPen(Qt::NoPen);
  plot_->axisRect()->insetLayout()->take(plot_->legend);
  plot_->plotLayout()->addElement(1, 1, plot_->legend);
  plot_->plotLayout()->setColumnStretchFactor(1, 0.001);

  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(plot_);
  rebuild();
}

void OverheadView::setRunController(RunController* run) {
  run_ = run;
  connect(run_, &RunController::traceReset, this, &OverheadView::rebuild);
  connect(run_, &RunController::phaseChanged, this, &OverheadView::rebuild);
  connect(run_, &RunController::traceGrew, this, [this] {
    if (throttle_.due()) rebuild();
  });
}

void OverheadView::setPrediction(std::shared_ptr<const Prediction> prediction,
                                 const Experiment& experiment) {
  prediction_ = std::move(prediction);
  const ParallelPlan& plan = experiment.parallel;
  try {
    // The costs the prediction used, so the formula matches its units (as Statistics).
    const UnitCosts costs = prediction_ ? prediction_->result.formula_costs : UnitCosts{};
    formula_bubble_ = theoretical_bubble(plan.schedule, plan.pp, plan.microbatches,
                                         std::max(1, plan.chunks), costs);
    formula_text_ = QString::fromStdString(bubble_formula_filled(
        plan.schedule, plan.pp, plan.microbatches, std::max(1, plan.chunks), costs));
  } catch (const std::exception&) {
    formula_bubble_ = std::nan("");  // no formula for this plan: no line
    formula_text_.clear();
  }
  rebuild();
}

void OverheadView::rebuild() {
  const RefreshThrottle::Timing timing(throttle_);
  measured_ = run_ ? overhead_breakdown(run_->trace()) : std::vector<OverheadShares>{};
  predicted_ =
      prediction_ ? overhead_breakdown(prediction_->result.trace) : std::vector<OverheadShares>{};

  // Per device a measured and a predicted bar side by side, then a gap.
  QSharedPointer<QCPAxisTickerText> ticker(new QCPAxisTickerText);
  std::vector<QVector<double>> keys(layers_.size());
  std::vector<QVector<double>> values(layers_.size());
  double key = 0;
  const auto add_bar = [&](const OverheadShares& shares, const QString& label) {
    ticker->addTick(key, label);
    for (size_t layer = 0; layer < layers_.size(); ++layer) {
      keys[layer] << key;
      values[layer] << shares.*kLayers[layer].share;
    }
    key += 1;
  };
  const size_t devices = std::max(measured_.size(), predicted_.size());
  for (size_t device = 0; device < devices; ++device) {
    if (device < measured_.size())
      add_bar(measured_[device], tr("%1 M", "device, measured").arg(device));
    if (device < predicted_.size())
      add_bar(predicted_[device], tr("%1 P", "device, predicted").arg(device));
    key += 0.5;
  }
  for (size_t layer = 0; layer < layers_.size(); ++layer)
    layers_[layer]->setData(keys[layer], values[layer], true);
  plot_->xAxis->setTicker(ticker);
  plot_->xAxis->setLabel(devices > 0 ? tr("device: M measured, P predicted") : tr("no trace yet"));
  plot_->xAxis->setRange(-0.7, std::max(key - 0.8, 0.7));
  const bool line = devices > 0 && std::isfinite(formula_bubble_);
  formula_line_->setData(QVector<double>{-0.7, std::max(key - 0.8, 0.7)},
                         QVector<double>(2, 1.0 - formula_bubble_));
  formula_line_->setVisible(line);
  formula_line_->setName(tr("textbook bubble\n%1").arg(formula_text_));
  if (line)
    formula_line_->addToLegend();
  else
    formula_line_->removeFromLegend();
  plot_->replot(QCustomPlot::rpQueuedReplot);
}

}  // namespace pipelab
