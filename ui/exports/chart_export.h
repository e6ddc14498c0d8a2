// Chart export: one or more plots (the measured and predicted timelines, the
// memory chart, the training chart) drawn into a PNG, SVG or PDF file for
// slides. The format follows the file's extension. Vector formats stay
// vector: the plots are drawn through QCustomPlot's painter, not screenshotted.
#pragma once

#include <QList>
#include <QSize>
#include <QString>
#include <optional>

class QCustomPlot;

namespace pipelab {

enum class ChartFormat { Png, Svg, Pdf };

// From the extension (case-insensitive); nullopt for anything else.
std::optional<ChartFormat> chart_format_for_path(const QString& path);
// "PNG image (*.png);;SVG drawing (*.svg);;PDF document (*.pdf)"
QString chart_file_filter();

// Draws `charts` one after another (stacked for Qt::Vertical, side by side for
// Qt::Horizontal) into `path`. Each chart is drawn at `size` when it is valid,
// else at its on-screen size, or at 1400 x 500 when it has never been shown.
// A `caption` (lines of text, such as a comparison's statistics) is printed
// under the charts in a monospace font.
// Returns false and sets *error to one line when the format is unknown or the
// file cannot be written.
bool export_charts(const QList<QCustomPlot*>& charts, Qt::Orientation orientation,
                   const QString& path, QString* error, QSize size = QSize(),
                   const QString& caption = QString());

}  // namespace pipelab
