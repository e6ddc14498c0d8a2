// The replayed timeline: after a run, the measured op times laid out on the
// schedule (one core per device), computed off the GUI thread, shown as a
// chart and as numbers in the statistics panel.
#include <QComboBox>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>

#include "ui/exports/export_actions.h"
#include "ui/main_window.h"
#include "ui/models/experiment_document.h"
#include "ui/models/prediction_updater.h"
#include "ui/models/replay_updater.h"
#include "ui/models/run_controller.h"
#include "ui/number_text.h"
#include "ui/panels/stats_panel.h"
#include "ui/timeline/timeline_chart.h"
#include "ui/timeline/timeline_plottable.h"
#include "ui/timeline/timeline_view.h"
#include "ui_test_support.h"

using namespace pipelab;

namespace {

constexpr int kRunTimeoutMs = 20000;

// Four stages: more virtual devices than this machine may have cores.
Experiment four_stage_experiment(int steps) {
  Experiment experiment = testing::short_experiment(steps);
  experiment.parallel.pp = 4;
  return experiment;
}

// Picks a "Show:" entry the way a user does.
void choose_arrangement(TimelineView* view, TimelineView::Arrangement arrangement) {
  QComboBox* combo = view->arrangementCombo();
  const int index = combo->findData(static_cast<int>(arrangement));
  QVERIFY(index >= 0);
  combo->setCurrentIndex(index);
  emit combo->activated(index);
}

bool has_row_for_every_device(const TimelineChart* chart, int devices) {
  std::vector<bool> seen(static_cast<size_t>(devices), false);
  for (const TraceEvent& event : chart->bars()->events())
    if (event.device >= 0 && event.device < devices) seen[event.device] = true;
  return std::all_of(seen.begin(), seen.end(), [](bool s) { return s; });
}

bool has_final_replay(const MainWindow& window) {
  const auto replay = window.replayUpdater()->replay();
  return replay && replay->final;
}

}  // namespace

class ReplayedTimelineTest : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() { testing::use_test_settings(); }

  void replayedViewWithoutARunShowsAHint() {
    MainWindow window;
    window.resize(1400, 900);
    window.show();
    TimelineView* view = window.timelineView();
    TimelineChart* replayed = view->replayedChart();
    QVERIFY(!view->visibleCharts().contains(replayed));  // not in the default view

    choose_arrangement(view, TimelineView::Arrangement::ReplayedUnder);
    QCOMPARE(view->arrangement(), TimelineView::Arrangement::ReplayedUnder);
    QCOMPARE(view->visibleCharts(),
             (QList<QCustomPlot*>{view->measuredChart(), replayed}));
    QVERIFY(replayed->isVisible());
    QVERIFY(!view->predictedChart()->isVisible());
    QCOMPARE(replayed->bars()->eventCount(), 0);
    QVERIFY(replayed->title().contains("no run yet"));
    // The rows the run will fill are already labelled.
    QCOMPARE(replayed->rowCount(), window.document()->experiment().parallel.devices());
    QVERIFY(window.statsPanel()->bubbleText().contains("replayed —"));
    QVERIFY(!window.grab().isNull());  // paints the empty chart

    choose_arrangement(view, TimelineView::Arrangement::PredictedUnderReplayed);
    QCOMPARE(view->visibleCharts(), (QList<QCustomPlot*>{replayed, view->predictedChart()}));
    choose_arrangement(view, TimelineView::Arrangement::AllThree);
    QCOMPARE(view->visibleCharts().size(), 3);
    QTemporaryDir dir;
    QString error;
    QVERIFY2(window.exports()->exportTimeline(dir.filePath("three.png"), &error),
             qPrintable(error));
    // The earlier choices still work.
    choose_arrangement(view, TimelineView::Arrangement::PredictedOnly);
    QCOMPARE(view->visibleCharts(), (QList<QCustomPlot*>{view->predictedChart()}));
  }

  void finishedRunIsReplayedOffTheGuiThreadOnEveryDevice() {
    MainWindow window;
    window.resize(1400, 900);
    window.show();
    window.document()->replace(four_stage_experiment(4), QString(), false);
    window.speedCombo()->setCurrentIndex(window.speedCombo()->findData(RunController::kLive));
    choose_arrangement(window.timelineView(), TimelineView::Arrangement::ReplayedUnder);
    RunController* run = window.runController();
    // Connected after the window's own handlers: by the time this runs the
    // replay has been asked for, and it must not have been computed in place.
    bool computing_when_ended = false;
    bool replayed_in_place = false;
    connect(run, &RunController::phaseChanged, this, [&](RunController::Phase phase) {
      if (run->isActive() || phase == RunController::Phase::Idle) return;
      computing_when_ended = window.replayUpdater()->isComputing();
      replayed_in_place = has_final_replay(window);
    });
    QVERIFY(window.startRun());
    QTRY_VERIFY_WITH_TIMEOUT(!run->isActive(), kRunTimeoutMs);
    QCOMPARE(run->phase(), RunController::Phase::Finished);
    QVERIFY(computing_when_ended);
    QVERIFY(!replayed_in_place);
    // The event loop keeps running while the worker replays.
    QTRY_VERIFY_WITH_TIMEOUT(has_final_replay(window), kRunTimeoutMs);

    const auto replay = window.replayUpdater()->replay();
    QVERIFY2(replay->error.isEmpty(), qPrintable(replay->error));
    QCOMPARE(replay->steps_measured, 4);
    TimelineChart* chart = window.timelineView()->replayedChart();
    QCOMPARE(chart->rowCount(), 4);
    QVERIFY(has_row_for_every_device(chart, 4));
    // The replay simulates the same window schedule as the prediction.
    QCOMPARE(chart->bars()->eventCount(),
             int(window.predictor()->prediction()->result.trace.events.size()));
    const double bubble = replay->result.bubble_fraction;
    QVERIFY(bubble >= 0.0 && bubble < 1.0);
    QVERIFY(replay->stepTime() > 0);
    QVERIFY(chart->title().startsWith("Replayed ("));
    QVERIFY(chart->title().contains(percent_text(bubble)));
    QVERIFY(chart->title().contains(duration_text(replay->stepTime())));
    QVERIFY2(window.statsPanel()->bubbleText().contains("replayed " + percent_text(bubble)),
             qPrintable(window.statsPanel()->bubbleText()));
    QVERIFY(window.statsPanel()->bubbleText().contains("measured "));
    QVERIFY(window.statsPanel()->throughputText().contains(
        "Replayed: step " + duration_text(replay->stepTime())));

    // Edits after the run do not change its replay; a reset clears it.
    window.document()->edit([](Experiment& e) { e.parallel.pp = 2; });
    window.predictor()->updateNow();
    QCOMPARE(window.timelineView()->predictedChart()->rowCount(), 2);
    QCOMPARE(chart->rowCount(), 4);
    QVERIFY(window.replayUpdater()->replay() == replay);
    window.resetRun();
    QVERIFY(!window.replayUpdater()->replay());
    QCOMPARE(chart->bars()->eventCount(), 0);
    QCOMPARE(chart->rowCount(), 2);
    QVERIFY(chart->title().contains("no run yet"));
    QVERIFY(window.statsPanel()->bubbleText().contains("replayed —"));
  }

  void longRunIsReplayedWhileItRunsAndWhenStopped() {
    MainWindow window;
    window.document()->replace(four_stage_experiment(100000), QString(), false);
    window.speedCombo()->setCurrentIndex(window.speedCombo()->findData(RunController::kLive));
    window.replayUpdater()->setLiveInterval(100);
    RunController* run = window.runController();
    QSignalSpy replays(window.replayUpdater(), &ReplayUpdater::updated);
    QVERIFY(window.startRun());
    QTRY_VERIFY_WITH_TIMEOUT(window.replayUpdater()->replay() != nullptr, kRunTimeoutMs);
    // Two live replays at least: the second copied only the events recorded since the first.
    QTRY_VERIFY_WITH_TIMEOUT(replays.count() >= 3, kRunTimeoutMs);  // the reset, then replays
    QVERIFY(run->isActive());
    QVERIFY(!window.replayUpdater()->replay()->final);
    QVERIFY(window.timelineView()->replayedChart()->title().contains("steps so far"));
    window.stopRun();
    QCOMPARE(run->phase(), RunController::Phase::Stopped);
    QTRY_VERIFY_WITH_TIMEOUT(has_final_replay(window), kRunTimeoutMs);
    const auto replay = window.replayUpdater()->replay();
    QCOMPARE(replay->steps_measured, int(run->trace().steps.size()));
    QVERIFY(has_row_for_every_device(window.timelineView()->replayedChart(), 4));
    // Built up a piece at a time, the replay is the one of the whole trace at once.
    const auto whole = ReplayUpdater::compute(run->experiment(), run->trace(),
                                              int(run->trace().steps.size()), true);
    QVERIFY(whole->error.isEmpty());
    QCOMPARE(replay->result.makespan, whole->result.makespan);
    QCOMPARE(replay->result.trace.events.size(), whole->result.trace.events.size());
  }
};

QTEST_MAIN(ReplayedTimelineTest)
#include "replayed_timeline_test.moc"
