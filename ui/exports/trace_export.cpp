#include "ui/exports/trace_export.h"

#include <QCoreApplication>
#include <optional>
#include <string>

#include "core/plan/parallel_plan.h"
#include "core/trace/csv_export.h"
#include "core/trace/step_trace.h"
#include "ui/models/prediction_updater.h"
#include "ui/models/run_controller.h"

namespace pipelab {
namespace {

// core/ writes both formats; an empty path or prefix skips that one.
bool write_trace_files(const Trace& trace, const QString& chrome_json_path,
                       const QString& csv_prefix, QString* error) {
  std::string message;
  if (!export_trace_files(trace, chrome_json_path.toStdString(), csv_prefix.toStdString(),
                          &message)) {
    if (error) *error = QString::fromStdString(message);
    return false;
  }
  return true;
}

}  // namespace

const Trace& trace_to_export(const RunController& run, const PredictionUpdater& predictor) {
  if (!run.trace().events.empty()) return run.trace();
  static const Trace empty;
  const auto prediction = predictor.prediction();
  return prediction ? prediction->result.trace : empty;
}

Trace trace_to_animate(const RunController& run, const PredictionUpdater& predictor,
                       const QString& predicted_title, QString* title) {
  const Trace& measured = run.trace();
  const std::optional<ScheduleKind> kind = parse_schedule(measured.schedule);
  if (!measured.steps.empty() && kind && !is_asynchronous(*kind)) {
    const int step = measured.steps[measured.steps.size() >= 2 ? 1 : 0].step;
    Trace one = step_trace(measured, step);
    if (!one.events.empty()) {
      *title = QCoreApplication::translate("TraceExport", "Measured (%1): step %2 of the run")
                   .arg(QString::fromStdString(measured.schedule))
                   .arg(step + 1);
      return one;
    }
  }
  *title = predicted_title;
  const auto prediction = predictor.prediction();
  return prediction ? prediction->result.trace : Trace{};
}

bool export_chrome_trace(const Trace& trace, const QString& path, QString* error) {
  return write_trace_files(trace, path, QString(), error);
}

bool export_csv(const Trace& trace, const QString& prefix, QString* error) {
  return write_trace_files(trace, QString(), prefix, error);
}

QString csv_prefix_for_path(const QString& path) {
  QString prefix = path;
  if (prefix.endsWith(QLatin1String(".csv"), Qt::CaseInsensitive)) prefix.chop(4);
  return prefix;
}

}  // namespace pipelab
