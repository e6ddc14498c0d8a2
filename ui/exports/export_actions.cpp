#include "ui/exports/export_actions.h"

#include <QAction>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QMenu>
#include <QSettings>
#include <algorithm>

#include "ui/exports/chart_export.h"
#include "ui/exports/timeline_gif.h"
#include "ui/exports/trace_export.h"
#include "ui/models/prediction_updater.h"
#include "ui/models/run_controller.h"
#include "ui/panels/compare_view.h"
#include "ui/panels/memory_view.h"
#include "ui/panels/overhead_view.h"
#include "ui/panels/training_view.h"
#include "ui/timeline/timeline_chart.h"
#include "ui/timeline/timeline_view.h"

namespace pipelab {
namespace {

const char* const kExportFolderKey = "exportFolder";

}  // namespace

ExportActions::ExportActions(const Sources& sources, QWidget* window)
    : QObject(window), sources_(sources), window_(window) {
  timeline_action_ = new QAction(tr("&Timeline chart…"), this);
  connect(timeline_action_, &QAction::triggered, this, [this] {
    exportChartWithDialog(tr("timeline"), [this](const QString& path, QString* error) {
      return exportTimeline(path, error);
    });
  });
  memory_action_ = new QAction(tr("&Memory chart…"), this);
  connect(memory_action_, &QAction::triggered, this, [this] {
    exportChartWithDialog(tr("memory"), [this](const QString& path, QString* error) {
      return exportMemoryChart(path, error);
    });
  });
  training_action_ = new QAction(tr("T&raining chart…"), this);
  connect(training_action_, &QAction::triggered, this, [this] {
    exportChartWithDialog(tr("training"), [this](const QString& path, QString* error) {
      return exportTrainingChart(path, error);
    });
  });
  comparison_action_ = new QAction(tr("&Comparison of runs…"), this);
  connect(comparison_action_, &QAction::triggered, this, [this] {
    exportChartWithDialog(tr("comparison"), [this](const QString& path, QString* error) {
      return exportComparison(path, error);
    });
  });
  overhead_action_ = new QAction(tr("&Overhead chart…"), this);
  connect(overhead_action_, &QAction::triggered, this, [this] {
    exportChartWithDialog(tr("overhead"), [this](const QString& path, QString* error) {
      return exportOverheadChart(path, error);
    });
  });
  gif_action_ = new QAction(tr("&Animated timeline (GIF)…"), this);
  gif_action_->setToolTip(
      tr("One step unfolding, bars appearing in time order, for slides: the run's second step "
         "(past the warm-up) for a synchronous schedule, else the prediction"));
  connect(gif_action_, &QAction::triggered, this, &ExportActions::exportGifWithDialog);
  chrome_action_ = new QAction(tr("Trace as &Chrome JSON (Perfetto)…"), this);
  connect(chrome_action_, &QAction::triggered, this, [this] { exportTraceWithDialog(true); });
  csv_action_ = new QAction(tr("&Events as CSV…"), this);
  connect(csv_action_, &QAction::triggered, this, [this] { exportTraceWithDialog(false); });
}

void ExportActions::addTo(QMenu* menu) const {
  menu->addAction(timeline_action_);
  menu->addAction(memory_action_);
  menu->addAction(training_action_);
  if (sources_.compare) menu->addAction(comparison_action_);
  menu->addAction(overhead_action_);
  menu->addAction(gif_action_);
  menu->addSeparator();
  menu->addAction(chrome_action_);
  menu->addAction(csv_action_);
}

bool ExportActions::exportTimeline(const QString& path, QString* error, QSize size) const {
  return export_charts(sources_.timeline->visibleCharts(), sources_.timeline->chartOrientation(),
                       path, error, size);
}

bool ExportActions::exportMemoryChart(const QString& path, QString* error, QSize size) const {
  return export_charts({sources_.memory->plot()}, Qt::Vertical, path, error, size);
}

bool ExportActions::exportTrainingChart(const QString& path, QString* error, QSize size) const {
  return export_charts({sources_.training->plot()}, Qt::Vertical, path, error, size);
}

bool ExportActions::exportComparison(const QString& path, QString* error, QSize size) const {
  const QList<int> compared = sources_.compare ? sources_.compare->runs() : QList<int>{};
  if (std::all_of(compared.begin(), compared.end(), [](int row) { return row < 0; })) {
    if (error)
      *error =
          tr("there are no runs to compare yet; run an experiment twice (Runs > Compare runs)");
    return false;
  }
  return export_charts(sources_.compare->charts(), Qt::Vertical, path, error, size,
                       sources_.compare->statisticsText());
}

bool ExportActions::exportOverheadChart(const QString& path, QString* error, QSize size) const {
  return export_charts({sources_.overhead->plot()}, Qt::Vertical, path, error, size);
}

bool ExportActions::exportTimelineGif(const QString& path, QString* error) const {
  QString title;
  const Trace trace = trace_to_animate(*sources_.run, *sources_.predictor,
                                       sources_.timeline->predictedChart()->title(), &title);
  return export_timeline_gif(trace, title, path, error);
}

bool ExportActions::exportChromeTrace(const QString& path, QString* error) const {
  return export_chrome_trace(trace_to_export(*sources_.run, *sources_.predictor), path, error);
}

bool ExportActions::exportCsv(const QString& prefix, QString* error) const {
  return export_csv(trace_to_export(*sources_.run, *sources_.predictor), prefix, error);
}

void ExportActions::exportChartWithDialog(const QString& what, const ChartWriter& write) {
  QSettings settings;
  const QString folder = settings.value(kExportFolderKey).toString();
  QString selected_filter;
  QString path = QFileDialog::getSaveFileName(
      window_, tr("Export the %1 chart").arg(what),
      QDir(folder).filePath(QStringLiteral("pipelab-%1.png").arg(what)), chart_file_filter(),
      &selected_filter);
  if (path.isEmpty()) return;
  if (!chart_format_for_path(path)) {
    // No or unknown extension: take the one of the chosen filter.
    const QString extension = selected_filter.section(QStringLiteral("*."), 1).section(')', 0, 0);
    path += '.' + (extension.isEmpty() ? QStringLiteral("png") : extension);
  }
  settings.setValue(kExportFolderKey, QFileInfo(path).absolutePath());
  QString error;
  if (!write(path, &error)) {
    emit failed(error);
    return;
  }
  emit wrote(tr("Wrote %1").arg(path));
}

void ExportActions::exportGifWithDialog() {
  QSettings settings;
  const QString folder = settings.value(kExportFolderKey).toString();
  QString path = QFileDialog::getSaveFileName(
      window_, tr("Export one step of the timeline as an animated GIF"),
      QDir(folder).filePath(QStringLiteral("pipelab-timeline.gif")), tr("Animated GIF (*.gif)"));
  if (path.isEmpty()) return;
  if (!path.endsWith(QLatin1String(".gif"), Qt::CaseInsensitive)) path += QStringLiteral(".gif");
  settings.setValue(kExportFolderKey, QFileInfo(path).absolutePath());
  QString error;
  if (!exportTimelineGif(path, &error)) {
    emit failed(error);
    return;
  }
  emit wrote(tr("Wrote %1").arg(path));
}

void ExportActions::exportTraceWithDialog(bool chrome) {
  QSettings settings;
  const QString folder = settings.value(kExportFolderKey).toString();
  const QString source = sources_.run->trace().events.empty() ? tr("predicted") : tr("measured");
  QString path;
  if (chrome) {
    path = QFileDialog::getSaveFileName(
        window_, tr("Export the %1 trace for Perfetto / chrome://tracing").arg(source),
        QDir(folder).filePath(QStringLiteral("pipelab-trace.json")), tr("Chrome trace (*.json)"));
  } else {
    path = QFileDialog::getSaveFileName(
        window_,
        tr("Export the %1 events as CSV (three files: _events, _memory, _steps)").arg(source),
        QDir(folder).filePath(QStringLiteral("pipelab.csv")), tr("CSV files (*.csv)"));
  }
  if (path.isEmpty()) return;
  settings.setValue(kExportFolderKey, QFileInfo(path).absolutePath());
  QString error;
  bool ok = false;
  QString written = path;
  if (chrome) {
    ok = exportChromeTrace(path, &error);
  } else {
    const QString prefix = csv_prefix_for_path(path);
    ok = exportCsv(prefix, &error);
    written = tr("%1_events.csv, _memory.csv and _steps.csv").arg(prefix);
  }
  if (!ok) {
    emit failed(error);
    return;
  }
  emit wrote(tr("Wrote %1").arg(written));
}

}  // namespace pipelab
