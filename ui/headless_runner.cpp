#include "ui/headless_runner.h"

#include <QComboBox>
#include <algorithm>
#include <cstdio>

#include "ui/exports/export_actions.h"
#include "ui/main_window.h"
#include "ui/models/prediction_updater.h"
#include "ui/models/replay_updater.h"
#include "ui/models/run_controller.h"
#include "ui/models/run_series_controller.h"
#include "ui/panels/memory_view.h"
#include "ui/panels/training_view.h"
#include "ui/timeline/timeline_chart.h"
#include "ui/timeline/timeline_view.h"

namespace pipelab {
namespace {

void print_error(const QString& text) {
  std::fprintf(stderr, "pipelab: %s\n", text.toLocal8Bit().constData());
}

}  // namespace

HeadlessRunner::HeadlessRunner(MainWindow* window, const HeadlessOptions& options, QObject* parent)
    : QObject(parent), window_(window), options_(options) {}

void HeadlessRunner::begin() {
  // Without a run there is only the prediction to draw.
  if (!options_.run)
    window_->timelineView()->setArrangement(TimelineView::Arrangement::PredictedOnly);
  if (!options_.run) {
    exportAndFinish();
    return;
  }
  RunController* run = window_->runController();
  // Charts for slides show the whole run, not a replay in progress.
  window_->speedCombo()->setCurrentIndex(window_->speedCombo()->findData(RunController::kLive));
  // A preset of several runs ends after its last (the series' end comes
  // after the run's, so both signals lead here).
  RunSeriesController* series = window_->runSeries();
  const auto on_end = [this, run, series] {
    const RunController::Phase phase = run->phase();
    if (run->isActive() || series->runningPart() > 0 || phase == RunController::Phase::Idle ||
        done_)
      return;
    if (phase == RunController::Phase::Failed) {
      print_error(QObject::tr("the run failed: %1").arg(run->errorText()));
      failed_ = true;
    }
    run->catchUp();
    exportAndFinish();
  };
  // The exports then show the run up to the limit: say so.
  connect(run, &RunController::recordingLimitReached, this,
          [](const QString& text) { print_error(text); });
  connect(run, &RunController::phaseChanged, this, on_end);
  connect(series, &RunSeriesController::finished, this, on_end);
  connect(series, &RunSeriesController::ended, this, on_end);
  if (!window_->startRun(false)) {
    print_error(QObject::tr("cannot run: %1").arg(window_->shownProblems().join("; ")));
    failed_ = true;
    exportAndFinish();
  }
}

void HeadlessRunner::exportAndFinish() {
  if (done_) return;
  done_ = true;
  window_->predictor()->updateNow();
  // Slides show the whole run, not the follow-live window.
  window_->timelineView()->setFollowLive(false);
  window_->runController()->catchUp();
  window_->timelineView()->measuredChart()->fitAll();
  // The replay is computed off the GUI thread; a script waits for the final one.
  if (window_->timelineView()->visibleCharts().contains(window_->timelineView()->replayedChart()))
    window_->replayUpdater()->updateNow();
  window_->memoryView()->rebuild();
  window_->trainingView()->rebuild();
  const int rows = std::max({window_->timelineView()->measuredChart()->rowCount(),
                             window_->timelineView()->replayedChart()->rowCount(),
                             window_->timelineView()->predictedChart()->rowCount()});
  const QSize timeline_size(kChartWidth, 150 + 34 * std::max(rows, 1));
  const QSize memory_size(kChartWidth, 800);
  QString error;
  if (!options_.export_timeline.isEmpty() &&
      !window_->exports()->exportTimeline(options_.export_timeline, &error, timeline_size)) {
    print_error(error);
    failed_ = true;
  }
  if (!options_.export_memory.isEmpty() &&
      !window_->exports()->exportMemoryChart(options_.export_memory, &error, memory_size)) {
    print_error(error);
    failed_ = true;
  }
  if (!options_.export_gif.isEmpty() &&
      !window_->exports()->exportTimelineGif(options_.export_gif, &error)) {
    print_error(error);
    failed_ = true;
  }
  emit finished(failed_ ? 1 : 0);
}

}  // namespace pipelab
