#include "ui/exports/chart_export.h"

#include <qcustomplot.h>

#include <QCoreApplication>
#include <QFile>
#include <QFileInfo>
#include <QImage>
#include <QPageSize>
#include <QPdfWriter>
#include <QSvgGenerator>
#include <algorithm>

namespace pipelab {
namespace {

constexpr double kPngScale = 2.0;  // sharp on slides and high-dpi screens
constexpr int kScreenDpi = 96;

constexpr QSize kUnshownChartSize(1400, 500);

QSize chart_size(const QCustomPlot* chart, QSize requested) {
  if (requested.isValid() && !requested.isEmpty()) return requested;
  // A widget that was never shown reports Qt's default size (640 x 480 or
  // 100 x 30); only trust sizes a user has seen.
  if (chart->isVisible() && chart->width() >= 200 && chart->height() >= 120) return chart->size();
  return kUnshownChartSize;
}

QFont caption_font() {
  QFont font(QStringLiteral("monospace"), 9);
  font.setStyleHint(QFont::Monospace);
  return font;
}
constexpr int kCaptionMargin = 12;

// Where each chart goes, where the caption goes, and the size of the whole picture.
struct Placement {
  QList<QRect> rects;
  QRect caption;
  QSize total;
};

Placement place(const QList<QCustomPlot*>& charts, Qt::Orientation orientation, QSize requested,
                const QString& caption) {
  Placement placement;
  int offset = 0;
  int across = 0;
  for (const QCustomPlot* chart : charts) {
    const QSize size = chart_size(chart, requested);
    if (orientation == Qt::Vertical) {
      placement.rects << QRect(QPoint(0, offset), size);
      offset += size.height();
      across = std::max(across, size.width());
    } else {
      placement.rects << QRect(QPoint(offset, 0), size);
      offset += size.width();
      across = std::max(across, size.height());
    }
  }
  placement.total = orientation == Qt::Vertical ? QSize(across, offset) : QSize(offset, across);
  if (!caption.isEmpty()) {
    const QFontMetrics metrics(caption_font());
    const QSize text = metrics.size(0, caption);
    placement.caption = QRect(kCaptionMargin, placement.total.height() + kCaptionMargin / 2,
                              text.width(), text.height());
    placement.total = QSize(std::max(placement.total.width(), text.width() + 2 * kCaptionMargin),
                            placement.total.height() + text.height() + kCaptionMargin);
  }
  return placement;
}

void draw_charts(QCPPainter& painter, const QList<QCustomPlot*>& charts, const Placement& placement,
                 const QString& caption) {
  if (!caption.isEmpty()) {
    painter.save();
    painter.setFont(caption_font());
    painter.setPen(Qt::black);
    painter.drawText(placement.caption, Qt::AlignLeft | Qt::AlignTop, caption);
    painter.restore();
  }
  for (int i = 0; i < charts.size(); ++i) {
    const QRect rect = placement.rects[i];
    painter.save();
    painter.translate(rect.topLeft());
    charts[i]->toPainter(&painter, rect.width(), rect.height());
    painter.restore();
  }
}

// SVG and PDF stay vector: QCustomPlot draws its items, not a pixmap.
bool draw_vectorized(QPaintDevice* device, const QList<QCustomPlot*>& charts,
                     const Placement& placement, const QString& caption) {
  QCPPainter painter;
  if (!painter.begin(device)) return false;
  painter.setMode(QCPPainter::pmVectorized);
  draw_charts(painter, charts, placement, caption);
  painter.end();
  return true;
}

}  // namespace

std::optional<ChartFormat> chart_format_for_path(const QString& path) {
  const QString suffix = QFileInfo(path).suffix().toLower();
  if (suffix == QLatin1String("png")) return ChartFormat::Png;
  if (suffix == QLatin1String("svg")) return ChartFormat::Svg;
  if (suffix == QLatin1String("pdf")) return ChartFormat::Pdf;
  return std::nullopt;
}

QString chart_file_filter() {
  return QCoreApplication::translate(
      "ChartExport", "PNG image (*.png);;SVG drawing (*.svg);;PDF document (*.pdf)");
}

bool export_charts(const QList<QCustomPlot*>& charts, Qt::Orientation orientation,
                   const QString& path, QString* error, QSize size, const QString& caption) {
  auto fail = [&](const QString& message) {
    if (error) *error = message;
    return false;
  };
  const auto format = chart_format_for_path(path);
  if (!format)
    return fail(QCoreApplication::translate(
                    "ChartExport", "%1: unknown chart format; use a .png, .svg or .pdf file name")
                    .arg(QFileInfo(path).fileName()));
  if (charts.isEmpty())
    return fail(QCoreApplication::translate("ChartExport", "there is no chart to export"));
  {
    // Find out early (and in plain words) when the file cannot be written.
    QFile probe(path);
    if (!probe.open(QIODevice::WriteOnly))
      return fail(QCoreApplication::translate("ChartExport", "cannot write %1: %2")
                      .arg(path, probe.errorString()));
  }

  const Placement placement = place(charts, orientation, size, caption);
  bool written = true;
  switch (*format) {
    case ChartFormat::Png: {
      QImage image(placement.total * kPngScale, QImage::Format_ARGB32);
      image.setDevicePixelRatio(1.0);
      image.fill(Qt::white);
      {
        QCPPainter painter(&image);
        painter.setRenderHint(QPainter::Antialiasing);
        painter.scale(kPngScale, kPngScale);
        draw_charts(painter, charts, placement, caption);
      }
      written = image.save(path, "PNG");
      break;
    }
    case ChartFormat::Svg: {
      QSvgGenerator generator;
      generator.setFileName(path);
      generator.setSize(placement.total);
      generator.setViewBox(QRect(QPoint(0, 0), placement.total));
      generator.setResolution(kScreenDpi);
      generator.setTitle(QStringLiteral("PipeLab"));
      written = draw_vectorized(&generator, charts, placement, caption);
      break;
    }
    case ChartFormat::Pdf: {
      QPdfWriter writer(path);
      writer.setCreator(QStringLiteral("PipeLab"));
      writer.setResolution(kScreenDpi);
      const QSizeF points = QSizeF(placement.total) * 72.0 / kScreenDpi;
      writer.setPageSize(QPageSize(points, QPageSize::Point));
      writer.setPageMargins(QMarginsF(0, 0, 0, 0));
      written = draw_vectorized(&writer, charts, placement, caption);
      break;
    }
  }
  // toPainter laid the charts out for the file's size; lay them out for the screen again.
  for (QCustomPlot* chart : charts) chart->replot(QCustomPlot::rpQueuedReplot);
  if (!written || QFileInfo(path).size() == 0)
    return fail(
        QCoreApplication::translate("ChartExport", "could not write the chart to %1").arg(path));
  return true;
}

}  // namespace pipelab
