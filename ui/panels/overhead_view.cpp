#include "ui/panels/overhead_view.h"

#include <qcustomplot.h>

#include <QVBoxLayout>
#include <cmath>

#include "core/sim/bubble_formula.h"
#include "ui/models/run_controller.h"
#include "ui/panels/formula_words.h"
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

  // The labels that fit follow the axis's width.
  connect(plot_, &QCustomPlot::afterLayout, this, &OverheadView::applyTickLabels);

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
    formula_text_ = formula_in_words(bubble_formula_filled(
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
  ticks_.clear();
  std::vector<QVector<double>> keys(layers_.size());
  std::vector<QVector<double>> values(layers_.size());
  double key = 0;
  const auto add_bar = [&](const OverheadShares& shares, const QString& label, size_t device) {
    ticks_.push_back({key, label, static_cast<int>(device)});
    for (size_t layer = 0; layer < layers_.size(); ++layer) {
      keys[layer] << key;
      values[layer] << shares.*kLayers[layer].share;
    }
    key += 1;
  };
  const size_t devices = std::max(measured_.size(), predicted_.size());
  for (size_t device = 0; device < devices; ++device) {
    if (device < measured_.size())
      add_bar(measured_[device], tr("%1 M", "device, measured").arg(device), device);
    if (device < predicted_.size())
      add_bar(predicted_[device], tr("%1 P", "device, predicted").arg(device), device);
    key += 0.5;
  }
  for (size_t layer = 0; layer < layers_.size(); ++layer)
    layers_[layer]->setData(keys[layer], values[layer], true);
  plot_->xAxis->setLabel(devices > 0 ? tr("device: M measured, P predicted") : tr("no trace yet"));
  plot_->xAxis->setRange(-0.7, std::max(key - 0.8, 0.7));
  bars_per_device_ = (measured_.empty() ? 0 : 1) + (predicted_.empty() ? 0 : 1);
  labelled_every_ = 0;  // chosen anew for these ticks
  applyTickLabels();
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

// With more devices than labels fit across the axis (GPT-3's 128 ran into a
// black band), label the first bar of every n-th device with its number.
void OverheadView::applyTickLabels() {
  QFontMetrics metrics(plot_->xAxis->tickLabelFont());
  int widest = 0;
  for (const Tick& tick : ticks_) widest = std::max(widest, metrics.horizontalAdvance(tick.label));
  const QCPRange range = plot_->xAxis->range();
  const int width = plot_->axisRect()->width() > 0 ? plot_->axisRect()->width() : plot_->width();
  const double pixels_per_key = width / std::max(range.size(), 1e-9);
  const double room = widest + kLabelSpacing;
  int every = 1;
  if (bars_per_device_ > 0 && pixels_per_key < room) {
    const double device_keys = bars_per_device_ + 0.5;
    every = static_cast<int>(std::ceil(room / (pixels_per_key * device_keys)));
  }
  if (every == labelled_every_) return;
  labelled_every_ = every;
  QSharedPointer<QCPAxisTickerText> ticker(new QCPAxisTickerText);
  int labelled = -1;
  for (const Tick& tick : ticks_) {
    if (every == 1) {
      ticker->addTick(tick.key, tick.label);
    } else if (tick.device % every == 0 && tick.device != labelled) {
      ticker->addTick(tick.key, QString::number(tick.device));
      labelled = tick.device;
    }
  }
  plot_->xAxis->setTicker(ticker);
  plot_->replot(QCustomPlot::rpQueuedReplot);
}

}  // namespace pipelab
