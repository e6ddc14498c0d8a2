// Runs compared side by side: the run store keeps every run that ends, a run
// saves to a file and reopens, a malformed run file is refused with a message,
// and the comparison overlays two loss curves and two memory curves and
// stacks two timelines on one time scale. Also the measured timeline's
// warm-up mark, the statistics without warm-up, and the note (with the
// replayed view one click away) when a run has more devices than cores.
#include <qcustomplot.h>

#include <QPushButton>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QtTest>

#include "core/trace/run_statistics.h"
#include "ui/exports/export_actions.h"
#include "ui/main_window.h"
#include "ui/models/experiment_document.h"
#include "ui/models/run_controller.h"
#include "ui/models/run_store.h"
#include "ui/number_text.h"
#include "ui/panels/compare_view.h"
#include "ui/panels/stats_panel.h"
#include "ui/runs_menu.h"
#include "ui/timeline/timeline_chart.h"
#include "ui/timeline/timeline_plottable.h"
#include "ui/timeline/timeline_view.h"
#include "ui_test_support.h"

using namespace pipelab;

namespace {

constexpr int kRunTimeoutMs = 20000;

Experiment short_run(ScheduleKind schedule, int steps) {
  Experiment experiment = testing::short_experiment(steps);
  experiment.parallel.schedule = schedule;
  return experiment;
}

// Runs `experiment` to its end in `window`, live (no slowed playback).
bool run_to_end(MainWindow& window, const Experiment& experiment) {
  window.document()->replace(experiment, QString(), false);
  window.speedCombo()->setCurrentIndex(window.speedCombo()->findData(RunController::kLive));
  if (!window.startRun()) return false;
  RunController* run = window.runController();
  return QTest::qWaitFor([run] { return !run->isActive(); }, kRunTimeoutMs) &&
         run->phase() == RunController::Phase::Finished;
}

bool contains_row(const QTableWidget* table, const QString& name) {
  for (int row = 0; row < table->rowCount(); ++row)
    if (table->verticalHeaderItem(row)->text() == name) return true;
  return false;
}

}  // namespace

class CompareRunsTest : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() { testing::use_test_settings(); }

  void comparesTheLastTwoRuns() {
    MainWindow window;
    window.resize(1400, 900);
    window.show();
    RunStore* store = window.runStore();
    QCOMPARE(store->count(), 0);
    QVERIFY(run_to_end(window, short_run(ScheduleKind::GPipe, 3)));
    QCOMPARE(store->count(), 1);
    QVERIFY(run_to_end(window, short_run(ScheduleKind::OneFOneB, 3)));
    QCOMPARE(store->count(), 2);
    QCOMPARE(store->run(0)->trace.schedule, std::string("gpipe"));
    QCOMPARE(store->run(1)->trace.schedule, std::string("1f1b"));
    QCOMPARE(store->run(1)->trace.events.size(), window.runController()->trace().events.size());

    CompareView* compare = window.compareView();
    window.runsMenu()->showComparison();
    QVERIFY(QTest::qWaitForWindowExposed(compare));
    QCOMPARE(compare->runA(), 0);
    QCOMPARE(compare->runB(), 1);
    // Two loss series, one per run, named by the legend after the runs.
    for (int run = 0; run < 2; ++run) {
      QCOMPARE(compare->lossGraph(run)->dataCount(), 3);
      QVERIFY(compare->memoryGraph(run)->dataCount() > 0);
      // The legend's name is the run's, cut with … when long.
      QString shown = compare->lossGraph(run)->name();
      if (shown.endsWith(QChar(0x2026))) shown.chop(1);
      QVERIFY(shown.size() > 12);
      const QString full = QString::fromStdString(store->run(run)->name);
      QVERIFY2(full.contains(shown.mid(shown.size() - 12)) || shown.contains(full), qPrintable(shown));
    }
    QVERIFY(compare->lossGraph(0)->name().contains("gpipe"));
    QVERIFY(compare->lossGraph(1)->name().contains("1f1b"));
    QCOMPARE(compare->curvesPlot()->legend->itemCount(), 2);
    // Memory: by default one step of each run from its start, else the whole run.
    const int one_step_points = compare->memoryGraph(0)->dataCount();
    QCOMPARE(compare->memoryGraph(0)->data()->constBegin()->key, 0.0);
    compare->setMemoryOverWholeRun(true);
    QVERIFY(compare->memoryGraph(0)->dataCount() > one_step_points);
    compare->setMemoryOverWholeRun(false);
    QCOMPARE(compare->memoryGraph(0)->dataCount(), one_step_points);

    // Two timelines on one time range; moving one moves the other.
    TimelineChart* a = compare->timeline(0);
    TimelineChart* b = compare->timeline(1);
    QCOMPARE(a->bars()->eventCount(), int(store->run(0)->trace.events.size()));
    QCOMPARE(b->bars()->eventCount(), int(store->run(1)->trace.events.size()));
    QCOMPARE(a->xAxis->range().lower, b->xAxis->range().lower);
    QCOMPARE(a->xAxis->range().upper, b->xAxis->range().upper);
    QCOMPARE(a->bars()->timeScale(), b->bars()->timeScale());
    a->xAxis->setRange(0.1, 0.7);
    QCOMPARE(b->xAxis->range().lower, 0.1);
    QCOMPARE(b->xAxis->range().upper, 0.7);
    // Both mark their warm-up step.
    QCOMPARE(a->warmupEnd(), store->run(0)->trace.steps[0].t_end);
    QCOMPARE(b->warmupEnd(), store->run(1)->trace.steps[0].t_end);

    // Statistics side by side, per device, without warm-up.
    const QTableWidget* table = compare->statisticsTable();
    QCOMPARE(table->columnCount(), 2);
    QVERIFY(contains_row(table, "Step time"));
    QVERIFY(contains_row(table, "Bubble"));
    QVERIFY(contains_row(table, "Peak memory, device 1"));
    QVERIFY(compare->statisticsText().contains("mean of steps 2–3"));
    // The text's columns line up: each run's header above its values.
    const QStringList lines = compare->statisticsText().split('\n');
    const int header = lines.indexOf(QRegularExpression("^ +Run A +Run B$"));
    QVERIFY2(header >= 0, qPrintable(compare->statisticsText()));
    QCOMPARE(lines[header + 1].indexOf("gpipe"), lines[header].indexOf("Run A"));
    QVERIFY(!compare->grab().isNull());

    // The comparison exports, statistics and all.
    QTemporaryDir dir;
    QString error;
    for (const char* name : {"compare.png", "compare.svg", "compare.pdf"}) {
      QVERIFY2(window.exports()->exportComparison(dir.filePath(name), &error), qPrintable(error));
      QVERIFY(QFileInfo(dir.filePath(name)).size() > 0);
    }
    QVERIFY(testing::read_bytes(dir.filePath("compare.svg")).contains("Peak memory, device 1"));

    // A run chosen in the menu is compared with the one before it.
    compare->setRuns(1, 0);
    QVERIFY(compare->lossGraph(0)->name().contains("1f1b"));
  }

  void synchronousAndAsynchronousDataParallelCompare() {
    MainWindow window;
    Experiment sync = testing::short_experiment(3);
    sync.parallel.pp = 1;
    sync.parallel.dp = 2;
    Experiment async = sync;
    async.parallel.update = UpdateMode::Async;
    async.parallel.staleness = 1;
    QVERIFY(run_to_end(window, sync));
    QVERIFY2(run_to_end(window, async), qPrintable(window.runController()->errorText()));
    CompareView* compare = window.compareView();
    for (int run = 0; run < 2; ++run) {
      QCOMPARE(compare->lossGraph(run)->dataCount(), 3);
      QCOMPARE(compare->timeline(run)->rowCount(), 2);
    }
    QVERIFY(compare->statisticsText().contains("Peak memory, device 1"));
  }

  void aSavedRunReopensAsItWas() {
    MainWindow window;
    QVERIFY(run_to_end(window, short_run(ScheduleKind::GPipe, 2)));
    RunStore* store = window.runStore();
    QTemporaryDir dir;
    const QString path = dir.filePath("gpipe.run.json");
    QVERIFY(window.runsMenu()->saveRun(0, path));
    QVERIFY(window.runsMenu()->openRun(path));
    QCOMPARE(store->count(), 2);
    const RunRecord& saved = *store->run(0);
    const RunRecord& reopened = *store->run(1);
    QCOMPARE(reopened.name, saved.name);
    QCOMPARE(reopened.trace.events.size(), saved.trace.events.size());
    QCOMPARE(reopened.trace.memory.size(), saved.trace.memory.size());
    QCOMPARE(reopened.trace.steps.size(), saved.trace.steps.size());
    for (size_t i = 0; i < saved.trace.steps.size(); ++i)
      QCOMPARE(reopened.trace.steps[i].loss, saved.trace.steps[i].loss);
    QCOMPARE(reopened.trace.events.back().t_end, saved.trace.events.back().t_end);
    QCOMPARE(reopened.experiment.parallel.schedule, ScheduleKind::GPipe);
    // The reopened run is compared with the one it was saved from.
    QCOMPARE(window.compareView()->runA(), 0);
    QCOMPARE(window.compareView()->runB(), 1);
  }

  void aLongRunNameIsCutInTheLegend() {
    MainWindow window;
    RunRecord record;
    record.name = std::string(200, 'x');
    record.experiment = default_experiment();
    record.trace.source = "measured";
    record.trace.devices = describe_devices(1, 1, 1, 1);
    window.runStore()->add(std::move(record));
    window.runsMenu()->showComparison();
    const QString shown = window.compareView()->lossGraph(0)->name();
    QVERIFY2(shown.endsWith(QChar(0x2026)), qPrintable(shown));
    QVERIFY2(shown.size() < 60, qPrintable(shown));
  }

  void aMalformedRunFileIsRefusedWithAMessage() {
    MainWindow window;
    QTemporaryDir dir;
    const QString garbage = dir.filePath("garbage.json");
    QVERIFY(testing::write_text(garbage, "{\"format\": \"pipelab-run\", \"version\": 1, "));
    QVERIFY(!window.runsMenu()->openRun(garbage));
    QVERIFY2(window.notice().contains("not valid JSON"), qPrintable(window.notice()));
    QVERIFY(window.notice().contains("garbage.json"));
    // An experiment file is not a run.
    const QString experiment = QStringLiteral(PIPELAB_SOURCE_DIR "/examples/mnist_gpipe.json");
    QVERIFY(!window.runsMenu()->openRun(experiment));
    QVERIFY2(window.notice().contains("not a PipeLab run file"), qPrintable(window.notice()));
    QVERIFY(!window.runsMenu()->openRun(dir.filePath("missing.json")));
    QVERIFY(window.notice().contains("not found"));
    QCOMPARE(window.runStore()->count(), 0);
    // Nothing to compare or save yet: messages, not crashes.
    QString error;
    QVERIFY(!window.exports()->exportComparison(dir.filePath("none.png"), &error));
    QVERIFY(error.contains("no runs"));
    QVERIFY(!window.runsMenu()->saveRun(0, dir.filePath("none.json")));
    QVERIFY(window.notice().contains("no run to save"));
  }

  void statisticsLeaveTheWarmupOutAndTheTimelineMarksIt() {
    MainWindow window;
    QVERIFY(run_to_end(window, short_run(ScheduleKind::OneFOneB, 3)));
    const Trace& trace = window.runController()->trace();
    QVERIFY2(window.statsPanel()->throughputText().contains("mean of steps 2–3, warm-up left out"),
             qPrintable(window.statsPanel()->throughputText()));
    const RunStatistics stats = run_statistics(trace);
    QVERIFY(window.statsPanel()->throughputText().contains(duration_text(stats.step_time_s)));
    QCOMPARE(window.timelineView()->measuredChart()->warmupEnd(), trace.steps[0].t_end);
  }

  void fewerCoresThanDevicesIsSaidWithTheReplayedViewOneClickAway() {
    MainWindow window;
    window.resize(1400, 900);
    window.show();
    TimelineView* view = window.timelineView();
    view->setAvailableCores(1);
    QVERIFY(view->coresNotice().isEmpty());  // no run yet
    Experiment four = short_run(ScheduleKind::OneFOneB, 2);
    four.parallel.pp = 4;
    QVERIFY(run_to_end(window, four));
    QVERIFY2(view->coresNotice().contains("1 core for 4 virtual devices"),
             qPrintable(view->coresNotice()));
    QVERIFY(view->showReplayedButton()->isVisible());
    view->showReplayedButton()->click();
    QCOMPARE(view->arrangement(), TimelineView::Arrangement::PredictedUnderReplayed);
    QVERIFY(view->visibleCharts().contains(view->replayedChart()));
    QVERIFY(view->coresNotice().isEmpty());  // the measured chart is no longer shown
    view->setArrangement(TimelineView::Arrangement::PredictedUnder);
    QVERIFY(!view->coresNotice().isEmpty());
    view->setAvailableCores(64);
    QVERIFY(view->coresNotice().isEmpty());
  }
};

QTEST_MAIN(CompareRunsTest)
#include "compare_runs_test.moc"
