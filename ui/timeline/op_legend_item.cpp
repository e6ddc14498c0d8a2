#include "ui/timeline/op_legend_item.h"

#include "ui/timeline/op_colors.h"

namespace pipelab {

OpLegendItem::OpLegendItem(QCPLegend* legend, const QColor& color, const QString& text,
                           bool hatched)
    : QCPAbstractLegendItem(legend), color_(color), text_(text), hatched_(hatched) {
  setSelectable(false);
}

void OpLegendItem::draw(QCPPainter* painter) {
  const QSize icon = mParentLegend->iconSize();
  const QRect area = mRect;
  const QRectF swatch(area.left(), area.top() + (area.height() - icon.height()) / 2.0, icon.width(),
                      icon.height());
  painter->setPen(QPen(Qt::gray, 0));
  if (hatched_) {
    QColor fill = color_;
    fill.setAlpha(50);
    painter->fillRect(swatch, fill);
    painter->fillRect(swatch, bubble_brush());
    painter->setBrush(Qt::NoBrush);
  } else {
    painter->setBrush(color_);
  }
  painter->drawRect(swatch);
  painter->setFont(mParentLegend->font());
  painter->setPen(mParentLegend->textColor());
  const QRectF text_area(swatch.right() + mParentLegend->iconTextPadding(), area.top(),
                         area.width(), area.height());
  painter->drawText(text_area, Qt::AlignLeft | Qt::AlignVCenter, text_);
}

QSize OpLegendItem::minimumOuterSizeHint() const {
  const QFontMetrics metrics(mParentLegend->font());
  const QSize icon = mParentLegend->iconSize();
  const int width = icon.width() + mParentLegend->iconTextPadding() +
                    metrics.horizontalAdvance(text_) + mMargins.left() + mMargins.right();
  const int height = std::max(icon.height(), metrics.height()) + mMargins.top() + mMargins.bottom();
  return QSize(width, height);
}

}  // namespace pipelab
