#include "ui/timeline/timeline_view.h"

#include <QCheckBox>
#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QSplitter>
#include <QThread>
#include <QVBoxLayout>
#include <algorithm>

#include "core/trace/run_statistics.h"
#include "ui/core_message_text.h"
#include "ui/models/run_controller.h"
#include "ui/number_text.h"
#include "ui/timeline/device_row_label.h"
#include "ui/timeline/timeline_chart.h"
#include "ui/timeline/timeline_plottable.h"

namespace pipelab {
namespace {


// Which charts an arrangement shows.
struct ShownCharts {
  bool measured = false;
  bool replayed = false;
  bool predicted = false;
};

ShownCharts shown_charts(TimelineView::Arrangement arrangement) {
  using A = TimelineView::Arrangement;
  switch (arrangement) {
    case A::MeasuredOnly:
      return {true, false, false};
    case A::PredictedOnly:
      return {false, false, true};
    case A::PredictedUnder:
    case A::PredictedBeside:
      return {true, false, true};
    case A::ReplayedUnder:
      return {true, true, false};
    case A::PredictedUnderReplayed:
      return {false, true, true};
    case A::AllThree:
      return {true, true, true};
  }
  return {true, false, true};
}

// Hidden charts have no size in the splitter, and QCustomPlot warns when it
// draws into an empty buffer; a chart replots itself when it is resized into view.
void replot_if_shown(TimelineChart* chart) {
  if (chart->isVisible()) chart->replot(QCustomPlot::rpQueuedReplot);
}

}  // namespace

TimelineView::TimelineView(QWidget* parent) : QWidget(parent) {
  measured_ = new TimelineChart(this);
  predicted_ = new TimelineChart(this);
  replayed_ = new TimelineChart(this);
  measured_->setObjectName(QStringLiteral("measuredTimeline"));
  predicted_->setObjectName(QStringLiteral("predictedTimeline"));
  replayed_->setObjectName(QStringLiteral("replayedTimeline"));
  measured_->setTitle(tr("Measured: no run yet. Press Run (Space) or Step (→)."));
  predicted_->setTitle(tr("Predicted"));
  updateReplayedTitle();

  arrangement_combo_ = new QComboBox(this);
  arrangement_combo_->addItem(tr("Predicted under measured"),
                              static_cast<int>(Arrangement::PredictedUnder));
  arrangement_combo_->addItem(tr("Predicted beside measured"),
                              static_cast<int>(Arrangement::PredictedBeside));
  arrangement_combo_->addItem(tr("Measured only"), static_cast<int>(Arrangement::MeasuredOnly));
  arrangement_combo_->addItem(tr("Predicted only"), static_cast<int>(Arrangement::PredictedOnly));
  arrangement_combo_->addItem(tr("Replayed under measured"),
                              static_cast<int>(Arrangement::ReplayedUnder));
  arrangement_combo_->addItem(tr("Predicted under replayed"),
                              static_cast<int>(Arrangement::PredictedUnderReplayed));
  arrangement_combo_->addItem(tr("Measured, replayed and predicted"),
                              static_cast<int>(Arrangement::AllThree));
  arrangement_combo_->setObjectName(QStringLiteral("timelineShowCombo"));
  arrangement_combo_->setToolTip(
      tr("Replayed: the measured op times laid out on the schedule, one core per device; "
         "compare it with the prediction when the machine has fewer cores than devices"));
  follow_check_ = new QCheckBox(tr("Follow live"), this);
  follow_check_->setChecked(true);
  follow_check_->setToolTip(tr("Keep the newest events in view; dragging the chart turns it off"));
  auto* fit_button = new QPushButton(tr("Fit"), this);
  fit_button->setToolTip(tr("Show everything (or double-click a chart)"));
  auto* hint = new QLabel(tr("drag to pan · wheel to zoom · hover an op for details"), this);
  hint->setStyleSheet(QStringLiteral("QLabel { color: #555; }"));

  // Above the charts while a CPU run has more device threads than cores.
  available_cores_ = std::max(1, QThread::idealThreadCount());
  cores_row_ = new QWidget(this);
  cores_row_->setObjectName(QStringLiteral("coresNotice"));
  cores_row_->setStyleSheet(QStringLiteral("#coresNotice { background: #fff4d6; }"));
  cores_label_ = new QLabel(cores_row_);
  cores_label_->setWordWrap(true);
  show_replayed_button_ = new QPushButton(tr("Show the replayed view"), cores_row_);
  show_replayed_button_->setToolTip(
      tr("The measured op times laid out on the schedule, one core per device, above the "
         "prediction"));
  auto* cores_layout = new QHBoxLayout(cores_row_);
  cores_layout->setContentsMargins(6, 2, 6, 2);
  cores_layout->addWidget(cores_label_, 1);
  cores_layout->addWidget(show_replayed_button_);
  cores_row_->hide();
  connect(show_replayed_button_, &QPushButton::clicked, this,
          [this] { setArrangement(Arrangement::PredictedUnderReplayed); });

  splitter_ = new QSplitter(Qt::Vertical, this);
  splitter_->addWidget(measured_);
  splitter_->addWidget(replayed_);
  splitter_->addWidget(predicted_);
  splitter_->setChildrenCollapsible(false);

  auto* controls = new QHBoxLayout;
  controls->addWidget(new QLabel(tr("Show:"), this));
  controls->addWidget(arrangement_combo_);
  controls->addWidget(follow_check_);
  controls->addWidget(fit_button);
  controls->addStretch();
  controls->addWidget(hint);

  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(2, 2, 2, 2);
  layout->addLayout(controls);
  layout->addWidget(cores_row_);
  layout->addWidget(splitter_, 1);

  connect(arrangement_combo_, &QComboBox::activated, this, [this] {
    setArrangement(static_cast<Arrangement>(arrangement_combo_->currentData().toInt()));
  });
  connect(fit_button, &QPushButton::clicked, this, [this] {
    for (TimelineChart* chart : {measured_, replayed_, predicted_}) {
      chart->fitAll();
      replot_if_shown(chart);
    }
    window_chosen_by_user_ = false;
    follow_window_ = 0;
  });
  connect(measured_, &TimelineChart::userPanned, this, [this] { setFollowLive(false); });
  connect(measured_, &TimelineChart::userZoomed, this, [this] {
    // While following, the wheel picks how much history stays in view.
    window_chosen_by_user_ = true;
    follow_window_ = measured_->xAxis->range().size() / measured_->bars()->timeScale();
  });
  connect(follow_check_, &QCheckBox::toggled, this, [this](bool on) {
    if (on && run_) followNow(run_->playbackTime());
  });
  setArrangement(arrangement_);
  bubble_timer_ = new QTimer(this);
  bubble_timer_->setSingleShot(true);
  connect(bubble_timer_, &QTimer::timeout, this, &TimelineView::refreshMeasuredBubbles);
}

void TimelineView::setRunController(RunController* run) {
  run_ = run;
  connect(run_, &RunController::traceReset, this, &TimelineView::onTraceReset);
  connect(run_, &RunController::traceGrew, this,
          [this](int first_event, int, int) { onTraceGrew(first_event); });
  connect(run_, &RunController::playbackMoved, this, &TimelineView::onPlaybackMoved);
  connect(run_, &RunController::phaseChanged, this, [this](RunController::Phase phase) {
    if (!run_->isActive() && phase != RunController::Phase::Idle) {
      refreshMeasuredBubbles();  // the final bubbles, over the whole run
    }
    updateMeasuredTitle();
    updateReplayedTitle();
    updateCoresNotice();
    replot_if_shown(measured_);
    replot_if_shown(replayed_);
  });
  // A view built while the run holds events (the window rebuilt in another
  // language) shows them at once.
  if (!run_->trace().events.empty()) {
    onTraceReset();
    measured_->fitAll();
    refreshMeasuredBubbles();
  }
}

void TimelineView::setAvailableCores(int cores) {
  available_cores_ = std::max(1, cores);
  updateCoresNotice();
}

QString TimelineView::coresNotice() const {
  return cores_row_->isHidden() ? QString() : cores_label_->text();
}

void TimelineView::updateCoresNotice() {
  const bool cpu_run = run_ && run_->phase() != RunController::Phase::Idle &&
                       run_->experiment().backend.type != "cuda";
  const int devices = cpu_run ? device_count(run_->trace()) : 0;
  const bool measured_shown = shown_charts(arrangement_).measured;
  if (!cpu_run || devices <= available_cores_ || !measured_shown) {
    cores_row_->hide();
    return;
  }
  const QString cores = available_cores_ == 1 ? tr("1 core") : tr("%1 cores").arg(available_cores_);
  cores_label_->setText(
      tr("This machine has %1 for %2 virtual devices: the measured timeline is mostly threads "
         "waiting for a core, not the schedule. The replayed view lays the measured op times "
         "out with one core per device.")
          .arg(cores)
          .arg(devices));
  cores_row_->show();
}

void TimelineView::setPrediction(std::shared_ptr<const Prediction> prediction,
                                 const QString& problems) {
  if (!prediction) {
    planned_rows_.clear();
    showPlannedRows();  // not the rows of the experiment before
    predicted_->showTrace(Trace{});
    predicted_->xAxis->setRange(0, 1);
    const QString first = core_message_text(problems.section('\n', 0, 0));
    predicted_->setTitle(problems.isEmpty()
                             ? tr("Predicted: nothing to simulate")
                             : tr("Predicted: not available until the problems in the panels "
                                  "(marked ⚠) are fixed, e.g. %1")
                                   .arg(first));
    replot_if_shown(predicted_);
    return;
  }
  const SimulationResult& result = prediction->result;
  predicted_->showTrace(result.trace);
  const bool unit_time = result.trace.time_unit == "unit";
  const QString device = prediction->cost.is_unit()
                             ? tr("unit costs")
                             : QString::fromStdString(prediction->cost.device().name);
  predicted_->setTitle(tr("Predicted (%1, simulated on %2): makespan %3 · bubble %4")
                           .arg(QString::fromStdString(result.trace.schedule), device,
                                trace_time_text(result.makespan, unit_time),
                                percent_text(result.bubble_fraction)));
  predicted_->fitAll();
  replot_if_shown(predicted_);
  // Before a run, the measured chart already shows the rows it will fill.
  planned_rows_.clear();
  for (int device = 0; device < device_count(result.trace); ++device)
    planned_rows_ << device_row_label(result.trace, device);
  showPlannedRows();
}

void TimelineView::showPlannedRows() {
  if (!run_ || run_->phase() == RunController::Phase::Idle) {
    measured_->setRowLabels(planned_rows_);
    replot_if_shown(measured_);
  }
  if (!replay_) {
    replayed_->setRowLabels(planned_rows_);
    replot_if_shown(replayed_);
  }
}

void TimelineView::setReplay(std::shared_ptr<const Replay> replay) {
  const bool first_of_run = !replay_ || replay_->result.trace.events.empty();
  replay_ = std::move(replay);
  if (replay_ && !replay_->result.trace.events.empty()) {
    replayed_->showTrace(replay_->result.trace);
    // Later replays of the same run keep the user's zoom; the window's length barely moves.
    if (first_of_run) replayed_->fitAll();
  } else {
    replayed_->showTrace(Trace{});
    replayed_->setRowLabels(planned_rows_);
    replayed_->xAxis->setRange(0, 1);
  }
  updateReplayedTitle();
  replot_if_shown(replayed_);
}

void TimelineView::updateReplayedTitle() {
  if (replay_ && replay_->error.isEmpty()) {
    const QString so_far =
        replay_->final ? QString() : tr(" · from %1 steps so far").arg(replay_->steps_measured);
    replayed_->setTitle(
        tr("Replayed (measured op times on the schedule, one core per device): step %1 · "
           "bubble %2%3")
            .arg(duration_text(replay_->stepTime()),
                 percent_text(replay_->result.bubble_fraction), so_far));
  } else if (replay_) {
    replayed_->setTitle(tr("Replayed: not available: %1").arg(replay_->error));
  } else if (run_ && run_->isActive()) {
    replayed_->setTitle(tr("Replayed: the measured op times on the schedule, one core per "
                           "device; shown a few seconds into the run and when it ends"));
  } else {
    replayed_->setTitle(tr("Replayed: no run yet. After a run, its measured op times are laid "
                           "out here on the schedule, one core per device."));
  }
}

void TimelineView::onTraceReset() {
  measured_->showTrace(run_->trace(), kMeasuredBubbleMinSeconds);
  if (run_->phase() == RunController::Phase::Idle) measured_->setRowLabels(planned_rows_);
  measured_->setNow(run_->playbackTime());
  measured_->setWarmupEnd(warmup_end_time(run_->trace()));
  if (!window_chosen_by_user_) follow_window_ = 0;
  measured_->xAxis->setRange(0, 1);
  updateMeasuredTitle();
  replot_if_shown(measured_);
}

void TimelineView::onTraceGrew(int first_event) {
  const std::vector<TraceEvent>& events = run_->trace().events;
  if (first_event < static_cast<int>(events.size())) {
    measured_->appendEvents(std::vector<TraceEvent>(events.begin() + first_event, events.end()));
  }
  measured_->setWarmupEnd(warmup_end_time(run_->trace()));
  if (bubble_throttle_.due()) {
    refreshMeasuredBubbles();
  } else if (!bubble_timer_->isActive()) {
    bubble_timer_->start(static_cast<int>(bubble_throttle_.remainingMs()));
  }
  // While following, show about two steps once the first step's length is known.
  const auto& steps = run_->trace().steps;
  if (!window_chosen_by_user_ && follow_window_ == 0 && steps.size() >= 2) {
    follow_window_ = 2.5 * (steps[1].t_end - steps[0].t_end);
  }
  updateMeasuredTitle();
}

void TimelineView::refreshMeasuredBubbles() {
  const RefreshThrottle::Timing timing(bubble_throttle_);
  bubble_timer_->stop();
  measured_->updateBubbles(run_->trace(), kMeasuredBubbleMinSeconds);
  replot_if_shown(measured_);
}

void TimelineView::onPlaybackMoved(double time) {
  measured_->setNow(time);
  updateMeasuredTitle();
  if (followLive()) followNow(time);
  replot_if_shown(measured_);
}

void TimelineView::followNow(double time) {
  if (time <= 0) return;  // nothing recorded yet: keep the empty chart's axis
  if (follow_window_ <= 0 || time <= follow_window_) {
    measured_->showTimeRange(0, std::max(time, 1e-6) * 1.02);
  } else {
    measured_->showTimeRange(time - follow_window_ * 0.95, time + follow_window_ * 0.05);
  }
}

void TimelineView::updateMeasuredTitle() {
  if (!run_ || run_->phase() == RunController::Phase::Idle) {
    measured_->setTitle(tr("Measured: no run yet. Press Run (Space) or Step (→)."));
    return;
  }
  const Experiment& experiment = run_->experiment();
  const QString backend = experiment.backend.type == "cuda" ? tr("CUDA") : tr("CPU threads");
  // While the replay lags the recording, say where the replay is.
  const bool replaying = run_->playbackTime() < run_->recordedTime();
  const QString replay =
      replaying ? tr(" · replaying at %1 of %2")
                      .arg(duration_text(run_->playbackTime()), duration_text(run_->recordedTime()))
                : QString();
  // The trace names its schedule once the run has sent it; an attached run
  // that failed before then has only the experiment's.
  const std::string& traced = run_->trace().schedule;
  const QString schedule =
      QString::fromStdString(traced.empty() ? schedule_name(experiment.parallel.schedule) : traced);
  measured_->setTitle(tr("Measured (%1, %2): step %3 of %4 · %5%6")
                          .arg(schedule, backend)
                          .arg(run_->stepsDone())
                          .arg(run_->stepsTotal())
                          .arg(RunController::phaseName(run_->phase()), replay));
}

void TimelineView::setArrangement(Arrangement arrangement) {
  arrangement_ = arrangement;
  const int index = arrangement_combo_->findData(static_cast<int>(arrangement));
  arrangement_combo_->setCurrentIndex(index);
  const ShownCharts shown = shown_charts(arrangement);
  measured_->setVisible(shown.measured);
  replayed_->setVisible(shown.replayed);
  predicted_->setVisible(shown.predicted);
  splitter_->setOrientation(chartOrientation());
  // Shown charts share the space evenly (the weights are relative).
  splitter_->setSizes({shown.measured ? 1000 : 0, shown.replayed ? 1000 : 0,
                       shown.predicted ? 1000 : 0});
  // One legend is enough: the last chart's.
  const QList<QCustomPlot*> charts = visibleCharts();
  for (TimelineChart* chart : {measured_, replayed_, predicted_}) {
    chart->setLegendShown(chart == charts.last());
    replot_if_shown(chart);
  }
  updateCoresNotice();
  emit arrangementChanged(arrangement_);
}

void TimelineView::setFollowLive(bool follow) { follow_check_->setChecked(follow); }

bool TimelineView::followLive() const { return follow_check_->isChecked(); }

QList<QCustomPlot*> TimelineView::visibleCharts() const {
  const ShownCharts shown = shown_charts(arrangement_);
  QList<QCustomPlot*> charts;
  if (shown.measured) charts << measured_;
  if (shown.replayed) charts << replayed_;
  if (shown.predicted) charts << predicted_;
  return charts;
}

Qt::Orientation TimelineView::chartOrientation() const {
  return arrangement_ == Arrangement::PredictedBeside ? Qt::Horizontal : Qt::Vertical;
}

}  // namespace pipelab
