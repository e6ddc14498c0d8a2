#include "ui/panels/expert_load_chart.h"

namespace pipelab {

ExpertLoadChart::ExpertLoadChart(QWidget* parent) : QCustomPlot(parent) {
  setObjectName(QStringLiteral("expertLoadPlot"));
  setMinimumHeight(120);
  yAxis->setLabel(tr("tokens"));
  legend->setVisible(true);
  legend->setFont(QFont(font().family(), 8));
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
}

void ExpertLoadChart::showStep(const StepMetrics* metrics) {
  if (!metrics || metrics->expert_load.empty()) {
    setVisible(false);
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
      ticker->addTick(position, tr("L%1 e%2").arg(load.layer).arg(e));
      position += 1;
    }
    position += 1;  // a gap between layers
  }
  kept_->setData(x, kept, true);
  dropped_->setData(x, dropped, true);
  xAxis->setTicker(ticker);
  xAxis->setRange(-1, position - 1);
  xAxis->setLabel(tr("expert (moe layer, index) after step %1").arg(metrics->step + 1));
  double top = 0;
  for (int i = 0; i < x.size(); ++i) top = std::max(top, kept[i] + dropped[i]);
  yAxis->setRange(0, top > 0 ? top * 1.15 : 1.0);
  setVisible(true);
  replot(QCustomPlot::rpQueuedReplot);
}

int ExpertLoadChart::barCount() const { return kept_->dataCount(); }

double ExpertLoadChart::droppedShown() const {
  double total = 0;
  for (auto it = dropped_->data()->constBegin(); it != dropped_->data()->constEnd(); ++it)
    total += it->value;
  return total;
}

}  // namespace pipelab
