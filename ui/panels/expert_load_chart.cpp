#include "ui/panels/expert_load_chart.h"

namespace pipelab {

ExpertLoadChart::ExpertLoadChart(QWidget* parent) : QCustomPlot(parent) {
  setObjectName(QStringLiteral("expertLoadPlot"));
  setMinimumHeight(120);
  yAxis->setLabel(tr("tokens"));
  // The legend in one line at the top, above the bars (see
  // keepBarsUnderLegend): in a column it hid the last moe layer's experts in
  // a short dock.
  legend->setVisible(true);
  legend->setFont(QFont(font().family(), 8));
  legend->setFillOrder(QCPLegend::foColumnsFirst);
  legend->setIconSize(14, 10);
  legend->setMargins(QMargins(4, 0, 4, 0));
  legend->setBorderPen(Qt::NoPen);
  legend->setBrush(QColor(255, 255, 255, 200));
  axisRect()->insetLayout()->setInsetAlignment(0, Qt::AlignTop | Qt::AlignRight);
  kept_ = new QCPBars(xAxis, yAxis);
  kept_->setName(tr("routed and kept"));
  kept_->setBrush(QColor(0x3b, 0x7d, 0xd8));
  kept_->setPen(Qt::NoPen);
  dropped_ = new QCPBars(xAxis, yAxis);
  dropped_->setName(tr("dropped (over capacity)"));
  dropped_->setBrush(QColor(0xd8, 0x3b, 0x3b));
  dropped_->setPen(Qt::NoPen);
  dropped_->moveAbove(kept_);
  setVisible(false);
  connect(this, &QCustomPlot::afterLayout, this, &ExpertLoadChart::keepBarsUnderLegend);
}

void ExpertLoadChart::showStep(const StepMetrics* metrics) {
  if (!metrics || metrics->expert_load.empty()) {
    setShown(false);
    return;
  }
  QVector<double> x, kept, dropped;
  QSharedPointer<QCPAxisTickerText> ticker(new QCPAxisTickerText);
  double position = 0;
  for (const ExpertLoad& load : metrics->expert_load) {
    for (size_t e = 0; e < load.routed.size(); ++e) {
      x << position;
      kept << double(load.routed[e] - load.dropped[e]);
      dropped << double(load.dropped[e]);
      // The layer on a second line: side by side ("L1 e0") the labels of a
      // dock a few hundred pixels wide ran into each other.
      ticker->addTick(position, tr("e%2\nL%1").arg(load.layer).arg(e));
      position += 1;
    }
    position += 1;  // a gap between layers
  }
  kept_->setData(x, kept, true);
  dropped_->setData(x, dropped, true);
  xAxis->setTicker(ticker);
  xAxis->setRange(-1, position - 1);
  xAxis->setLabel(tr("expert e of layer L, after step %1").arg(metrics->step + 1));
  tallest_ = 0;
  for (int i = 0; i < x.size(); ++i) tallest_ = std::max(tallest_, kept[i] + dropped[i]);
  yAxis->setRange(0, tallest_ > 0 ? tallest_ * 1.15 : 1.0);
  setShown(true);
  replot(QCustomPlot::rpQueuedReplot);
}

void ExpertLoadChart::setShown(bool shown) {
  const bool changed = isHidden() == shown;
  setVisible(shown);
  if (changed) emit shownChanged(shown);
}

void ExpertLoadChart::keepBarsUnderLegend() {
  // The axis goes high enough that the tallest bar ends a few pixels under
  // the legend, whatever the chart's height and the language's font.
  const double height = axisRect()->height();
  const double legend_bottom = legend->outerRect().bottom() - axisRect()->top() + 4;
  if (tallest_ <= 0 || height <= legend_bottom) return;
  const double upper = tallest_ * height / (height - legend_bottom);
  if (std::abs(upper - yAxis->range().upper) < 1e-9 * upper) return;
  yAxis->setRange(0, upper);
  replot(QCustomPlot::rpQueuedReplot);  // this replot's ticks were set for the old range
}

int ExpertLoadChart::barCount() const { return kept_->dataCount(); }

double ExpertLoadChart::droppedShown() const {
  double total = 0;
  for (auto it = dropped_->data()->constBegin(); it != dropped_->data()->constEnd(); ++it)
    total += it->value;
  return total;
}

}  // namespace pipelab
