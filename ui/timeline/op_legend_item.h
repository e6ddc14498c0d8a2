// OpLegendItem: one entry of the timeline's legend: a swatch in the shared
// palette (or the bubble hatch) and its name. The legend lives inside the
// plot so exported charts carry it too.
#pragma once

#include <qcustomplot.h>

#include <QColor>
#include <QString>

namespace pipelab {

class OpLegendItem : public QCPAbstractLegendItem {
  Q_OBJECT

 public:
  // hatched: draw the bubble pattern instead of a solid swatch.
  OpLegendItem(QCPLegend* legend, const QColor& color, const QString& text, bool hatched = false);

 protected:
  void draw(QCPPainter* painter) override;
  QSize minimumOuterSizeHint() const override;

 private:
  QColor color_;
  QString text_;
  bool hatched_;
};

}  // namespace pipelab
