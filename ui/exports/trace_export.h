// Trace export: the events behind the timeline, for tools rather than slides:
// Chrome trace JSON (Perfetto, chrome://tracing) and three CSV tables. The
// window exports the measured run when there is one, the prediction otherwise.
#pragma once

#include <QString>

#include "core/trace/trace_events.h"

namespace pipelab {

class PredictionUpdater;
class RunController;

// The measured trace once the run has recorded events, else the predicted one
// (empty while the experiment has no prediction).
const Trace& trace_to_export(const RunController& run, const PredictionUpdater& predictor);

// What the animated timeline shows, and its title: a measured run of a
// synchronous schedule animates its second step (past the first step's
// warm-up; the first when there is only one), anything else the prediction.
// `predicted_title` is the predicted chart's title.
Trace trace_to_animate(const RunController& run, const PredictionUpdater& predictor,
                       const QString& predicted_title, QString* title);

// Writes `trace` as Chrome trace JSON to `path`. False with *error (one line,
// naming the file) when it cannot be written.
bool export_chrome_trace(const Trace& trace, const QString& path, QString* error);
// Writes <prefix>_events.csv, <prefix>_memory.csv and <prefix>_steps.csv.
bool export_csv(const Trace& trace, const QString& prefix, QString* error);
// The prefix of the three CSV files for a name chosen in a dialog: "a/run.csv" -> "a/run".
QString csv_prefix_for_path(const QString& path);

}  // namespace pipelab
