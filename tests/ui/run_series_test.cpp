// A preset of several runs: "Synced vs local BatchNorm in data parallel"
// trains the local variant and then the synced one on one Run, keeps both in
// the run store and opens the comparison on them as A and B, with the
// preset's note; "GPipe memory" runs beside 1F1B the same way, and "ZeRO
// stages" trains four runs and compares them as A to D, "Context
// parallelism" four ranks beside one device. Stop stops the series,
// a first run that fails leaves the others unstarted, a later variant that is
// not valid starts nothing, and the experiment being edited stays as the user
// left it.
#include <qcustomplot.h>

#include <QComboBox>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QtTest>
#include <algorithm>
#include <cmath>

#include "core/io/experiment_io.h"
#include "ui/main_window.h"
#include "ui/models/experiment_document.h"
#include "ui/models/prediction_updater.h"
#include "ui/models/presets.h"
#include "ui/models/run_controller.h"
#include "ui/models/run_series_controller.h"
#include "ui/models/run_store.h"
#include "ui/panels/compare_view.h"
#include "ui/timeline/timeline_chart.h"
#include "ui_test_support.h"

using namespace pipelab;

namespace {

constexpr int kRunTimeoutMs = 30000;
const QString kPresetId = QStringLiteral("batchnorm-data-parallel");

// Whether every batch norm of the model (a residual block's too) is synced,
// or none is; anything mixed is neither.
bool all_batch_norms_synced(const Experiment& experiment, bool sync) {
  int batch_norms = 0;
  for (const LayerSpec& layer : experiment.model.layers) {
    if (layer.type != LayerType::BatchNorm && layer.type != LayerType::ResidualBlock) continue;
    ++batch_norms;
    if (layer.sync != sync) return false;
  }
  return batch_norms > 0;
}

std::vector<double> losses_of(const Trace& trace) {
  std::vector<double> losses;
  for (const StepMetrics& step : trace.steps) losses.push_back(step.loss);
  return losses;
}

// The window with the preset applied, playing live, its runs `steps` long.
void apply_preset(MainWindow& window, int steps, const QString& id = kPresetId) {
  window.setSaveQuestion([](const QString&) { return QMessageBox::Discard; });
  QVERIFY(window.applyPreset(id));
  window.document()->edit([steps](Experiment& e) { e.training.steps = steps; });
  window.speedCombo()->setCurrentIndex(window.speedCombo()->findData(RunController::kLive));
}

// Waits until neither a run nor the series is on (the series' last step is queued).
bool wait_for_the_series(MainWindow& window) {
  return QTest::qWaitFor(
      [&window] {
        return !window.runController()->isActive() && window.runSeries()->runningPart() == 0;
      },
      kRunTimeoutMs);
}

}  // namespace

class RunSeriesTest : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() { testing::use_test_settings(); }

  void runTrainsLocalThenSyncedAndComparesThem() {
    MainWindow window;
    apply_preset(window, 12);
    QVERIFY(window.presetNote().contains(QStringLiteral("Local BatchNorm, dp 2")));
    const Experiment edited = window.document()->experiment();
    QVERIFY(all_batch_norms_synced(edited, false));
    QCOMPARE(edited.parallel.dp, 2);

    QVERIFY(window.startRun());
    QCOMPARE(window.runSeries()->runningPart(), 1);
    QVERIFY(wait_for_the_series(window));
    QCOMPARE(window.runController()->phase(), RunController::Phase::Finished);

    // Both runs are kept, local first, each with its batch norm setting and
    // the edit (12 steps) applied to both.
    RunStore* store = window.runStore();
    QCOMPARE(store->count(), 2);
    const RunRecord& local = *store->run(0);
    const RunRecord& synced = *store->run(1);
    QVERIFY(all_batch_norms_synced(local.experiment, false));
    QVERIFY(all_batch_norms_synced(synced.experiment, true));
    QCOMPARE(local.experiment.name, std::string("Local BatchNorm, dp 2"));
    QCOMPARE(synced.experiment.name, std::string("Synced BatchNorm, dp 2"));
    QCOMPARE(local.trace.steps.size(), size_t{12});
    QCOMPARE(synced.trace.steps.size(), size_t{12});
    // Synced batch norm all-reduces its statistics; local does not.
    const auto statistics_all_reduces = [](const Trace& trace) {
      return std::count_if(trace.events.begin(), trace.events.end(), [](const TraceEvent& event) {
        return event.op.kind == OpKind::AllReduce && event.op.layer >= 0;
      });
    };
    QCOMPARE(statistics_all_reduces(local.trace), 0);
    QVERIFY(statistics_all_reduces(synced.trace) > 0);

    // The comparison window is up on exactly those two, A and B, with the note.
    CompareView* compare = window.compareView();
    QVERIFY(compare->isVisible());
    QCOMPARE(compare->runA(), 0);
    QCOMPARE(compare->runB(), 1);
    QCOMPARE(compare->lossGraph(0)->dataCount(), 12);
    QCOMPARE(compare->lossGraph(1)->dataCount(), 12);
    QVERIFY(compare->lossGraph(0)->name().contains(QStringLiteral("Local")));
    QVERIFY(compare->lossGraph(1)->name().contains(QStringLiteral("Synced")));
    QVERIFY(compare->note().contains(QStringLiteral("σ²")));

    // Local batch norm trains differently from synced...
    const std::vector<double> local_losses = losses_of(local.trace);
    const std::vector<double> synced_losses = losses_of(synced.trace);
    double largest = 0;
    for (size_t i = 0; i < local_losses.size(); ++i)
      largest = std::max(largest, std::fabs(local_losses[i] - synced_losses[i]));
    QVERIFY2(largest > 1e-3, qPrintable(QString::number(largest)));
    // ...and synced, as the note says, like one device on the whole batch.
    Experiment one_device = synced.experiment;
    one_device.parallel.dp = 1;
    RunController single;
    single.start(one_device);
    QTRY_VERIFY_WITH_TIMEOUT(!single.isActive(), kRunTimeoutMs);
    QCOMPARE(single.phase(), RunController::Phase::Finished);
    const std::vector<double> single_losses = losses_of(single.trace());
    QCOMPARE(single_losses.size(), synced_losses.size());
    for (size_t i = 0; i < single_losses.size(); ++i)
      QVERIFY2(std::fabs(single_losses[i] - synced_losses[i]) < 1e-4,
               qPrintable(QString::number(i)));

    // The experiment being edited is the one the preset opened, edit and all.
    QCOMPARE(experiment_to_json(window.document()->experiment()), experiment_to_json(edited));
    // Choosing other runs takes the note away.
    compare->setRuns(1, 0);
    emit compare->findChildren<QComboBox*>().first()->activated(0);  // run A's chooser
    QVERIFY(compare->note().isEmpty());
  }

  void gpipeMemoryRunsBesideOneFOneB() {
    MainWindow window;
    apply_preset(window, 3, QStringLiteral("gpipe-memory"));
    QVERIFY(window.startRun());
    QVERIFY(wait_for_the_series(window));
    RunStore* store = window.runStore();
    QCOMPARE(store->count(), 2);
    QCOMPARE(store->run(0)->trace.schedule, std::string("gpipe"));
    QCOMPARE(store->run(1)->trace.schedule, std::string("1f1b"));
    // The memory pane: device 0 holds more at its peak under GPipe.
    CompareView* compare = window.compareView();
    const auto peak = [compare](int run) {
      bool found = false;
      return compare->memoryGraph(run)->getValueRange(found).upper;
    };
    QVERIFY2(peak(0) > peak(1), qPrintable(QStringLiteral("%1 vs %2").arg(peak(0)).arg(peak(1))));
  }

  void asynchronousDataParallelRunsBesideSynchronous() {
    MainWindow window;
    apply_preset(window, 120, QStringLiteral("async-data-parallel"));
    QVERIFY(window.startRun());
    QVERIFY(wait_for_the_series(window));
    RunStore* store = window.runStore();
    QCOMPARE(store->count(), 2);
    QCOMPARE(store->run(0)->experiment.parallel.update, UpdateMode::Async);
    QCOMPARE(store->run(1)->experiment.parallel.update, UpdateMode::Sync);
    // Both learn (the asynchronous one on gradients up to two updates old):
    // the last ten steps' mean loss is well under the first step's, and lower
    // for the synchronous run, as the note says.
    double tails[2] = {0, 0};
    for (int run = 0; run < 2; ++run) {
      const std::vector<double> losses = losses_of(store->run(run)->trace);
      QCOMPARE(losses.size(), size_t{120});
      for (size_t i = losses.size() - 10; i < losses.size(); ++i) tails[run] += losses[i] / 10;
      QVERIFY2(
          tails[run] < 0.85 * losses.front(),
          qPrintable(
              QStringLiteral("run %1: %2 -> %3").arg(run).arg(losses.front()).arg(tails[run])));
    }
    QVERIFY2(tails[1] < tails[0],
             qPrintable(QStringLiteral("sync %1, async %2").arg(tails[1]).arg(tails[0])));
  }

  // Four runs: ZeRO 0 to 3 train one after another, the comparison opens on
  // all four (A to D) along one loss curve, and device 0 holds less model
  // state at each stage, as the note's formulas say.
  void zeroStagesRunFourAndCompareThemAll() {
    MainWindow window;
    apply_preset(window, 3, QStringLiteral("zero-stages"));
    QVERIFY(window.startRun());
    QCOMPARE(window.runSeries()->runCount(), 4);
    QCOMPARE(window.runSeries()->runningPart(), 1);
    QVERIFY(wait_for_the_series(window));
    QCOMPARE(window.runController()->phase(), RunController::Phase::Finished);
    RunStore* store = window.runStore();
    QCOMPARE(store->count(), 4);
    for (int stage = 0; stage < 4; ++stage)
      QCOMPARE(store->run(stage)->experiment.parallel.zero, stage);
    CompareView* compare = window.compareView();
    QVERIFY(compare->isVisible());
    QCOMPARE(compare->runs(), (QList<int>{0, 1, 2, 3}));
    QCOMPARE(compare->statisticsTable()->columnCount(), 4);
    QVERIFY(compare->timeline(3)->isVisible());
    QCOMPARE(compare->charts().size(), 5);  // the curves and four timelines
    const std::vector<double> reference = losses_of(store->run(0)->trace);
    for (int stage = 1; stage < 4; ++stage) {
      QVERIFY(compare->lossGraph(stage)->name().contains(QStringLiteral("ZeRO-%1").arg(stage)));
      const std::vector<double> losses = losses_of(store->run(stage)->trace);
      QCOMPARE(losses.size(), reference.size());
      for (size_t i = 0; i < losses.size(); ++i)
        QVERIFY2(std::fabs(losses[i] - reference[i]) < 1e-4 * std::max(1.0, reference[i]),
                 qPrintable(QStringLiteral("zero %1 step %2").arg(stage).arg(i)));
    }
    // Model states (weights, gradients, optimizer state) shrink stage by
    // stage, at their peak once training runs (from device 0's first op:
    // building the layers holds whole gradients until zero 2 releases them).
    const auto states = [store](int row) {
      const Trace& trace = store->run(row)->trace;
      double first_op = 1e300;
      for (const TraceEvent& event : trace.events)
        if (event.device == 0) first_op = std::min(first_op, event.t_begin);
      int64_t most = 0;
      for (const MemorySample& sample : trace.memory) {
        if (sample.device != 0 || sample.t < first_op) continue;
        int64_t held = 0;
        for (MemoryCategory category :
             {MemoryCategory::Weights, MemoryCategory::Gradients, MemoryCategory::OptimizerState})
          held += sample.bytes[static_cast<int>(category)];
        most = std::max(most, held);
      }
      return most;
    };
    for (int stage = 1; stage < 4; ++stage)
      QVERIFY2(states(stage) < states(stage - 1),
               qPrintable(QStringLiteral("zero %1: %2 against %3")
                              .arg(stage)
                              .arg(states(stage))
                              .arg(states(stage - 1))));
    // The memory pane by category: ZeRO-1 shares out the optimizer state
    // (a quarter of it at dp 4), ZeRO-3 the weights too, where the other
    // stages hold them whole.
    const auto pane_peak = [compare](int run) {
      bool found = false;
      return compare->memoryGraph(run)->getValueRange(found).upper;
    };
    compare->setMemoryCategory(MemoryCategory::OptimizerState);
    QVERIFY2(std::abs(pane_peak(1) / pane_peak(0) - 0.25) < 0.02,
             qPrintable(QString::number(pane_peak(1) / pane_peak(0))));
    compare->setMemoryCategory(MemoryCategory::Weights);
    QVERIFY2(pane_peak(3) < 0.5 * pane_peak(2),
             qPrintable(QString::number(pane_peak(3) / pane_peak(2))));
    QCOMPARE(pane_peak(1), pane_peak(0));
    compare->setMemoryCategory(std::nullopt);
    // Three runs close slot D; Add run brings the missing run back into it.
    compare->setRuns(QList<int>{0, 1, 3});
    QCOMPARE(compare->runs(), (QList<int>{0, 1, 3}));
    QVERIFY(!compare->timeline(3)->isVisible());
    QVERIFY(compare->addRun());
    QCOMPARE(compare->runs(), (QList<int>{0, 1, 3, 2}));
    QVERIFY(!compare->addRun());  // four at most
  }

  // The context-parallel preset: four ranks, then one device, along one
  // loss curve, each rank holding well under half the activations.
  void contextParallelRunsBesideOneDevice() {
    MainWindow window;
    apply_preset(window, 5, QStringLiteral("context-parallel"));
    QVERIFY(window.startRun());
    QVERIFY(wait_for_the_series(window));
    RunStore* store = window.runStore();
    QCOMPARE(store->count(), 2);
    QCOMPARE(store->run(0)->experiment.parallel.cp, 4);
    QCOMPARE(store->run(1)->experiment.parallel.cp, 1);
    const std::vector<double> ranks = losses_of(store->run(0)->trace);
    const std::vector<double> one = losses_of(store->run(1)->trace);
    QCOMPARE(ranks.size(), one.size());
    for (size_t i = 0; i < one.size(); ++i)
      QVERIFY2(std::fabs(ranks[i] - one[i]) < 1e-5 * std::max(1.0, one[i]),
               qPrintable(QString::number(i)));
    CompareView* compare = window.compareView();
    compare->setMemoryOverWholeRun(true);
    compare->setMemoryCategory(MemoryCategory::Activations);
    bool found = false;
    const double rank = compare->memoryGraph(0)->getValueRange(found).upper;
    const double whole = compare->memoryGraph(1)->getValueRange(found).upper;
    QVERIFY2(rank < 0.45 * whole, qPrintable(QStringLiteral("%1 of %2 MiB").arg(rank).arg(whole)));
  }

  void stopStopsTheSeries() {
    MainWindow window;
    apply_preset(window, 100000);
    QVERIFY(window.startRun());
    QTRY_VERIFY_WITH_TIMEOUT(window.runController()->phase() == RunController::Phase::Running &&
                                 window.runController()->stepsDone() > 0,
                             kRunTimeoutMs);
    window.stopRun();
    QVERIFY(wait_for_the_series(window));
    QTest::qWait(100);  // time enough for a second run to start, were it to
    QCOMPARE(window.runController()->phase(), RunController::Phase::Stopped);
    QCOMPARE(window.runController()->experiment().name, std::string("Local BatchNorm, dp 2"));
    QCOMPARE(window.runStore()->count(), 1);  // the stopped first run, kept as any run
    QVERIFY(!window.compareView()->isVisible());
  }

  void aFailedFirstRunLeavesTheSecondUnstarted() {
    MainWindow window;
    apply_preset(window, 5);
    QTemporaryDir dir;
    // Valid, but its data is not there: the run fails as it prepares.
    window.document()->edit([&dir](Experiment& e) {
      e.data.source = "mnist";
      e.data.path = dir.filePath(QStringLiteral("no-mnist-here")).toStdString();
      e.model.input = {1, 28, 28};
      e.model.layers.back().out = 10;
    });
    const Experiment edited = window.document()->experiment();
    QVERIFY(window.startRun());
    QVERIFY(wait_for_the_series(window));
    QTest::qWait(100);
    QCOMPARE(window.runController()->phase(), RunController::Phase::Failed);
    QCOMPARE(window.runController()->experiment().name, std::string("Local BatchNorm, dp 2"));
    QCOMPARE(window.runStore()->count(), 0);
    QVERIFY(!window.shownProblems().isEmpty());
    QVERIFY(!window.compareView()->isVisible());
    QCOMPARE(experiment_to_json(window.document()->experiment()), experiment_to_json(edited));
  }

  void anInvalidSecondVariantStartsNothing() {
    MainWindow window;
    apply_preset(window, 5);
    // Local batch norm trains with asynchronous updates; synced cannot.
    window.document()->edit([](Experiment& e) {
      e.parallel.update = UpdateMode::Async;
      e.training.optimizer.type = "sgd";
    });
    window.predictor()->updateNow();
    QVERIFY(!window.startRun());
    QCOMPARE(window.runController()->phase(), RunController::Phase::Idle);
    QCOMPARE(window.runSeries()->runningPart(), 0);
    QVERIFY2(window.shownProblems().join('\n').contains(QStringLiteral("Synced BatchNorm, dp 2")),
             qPrintable(window.shownProblems().join('\n')));
  }

  void otherExperimentsRunOnce() {
    MainWindow window;
    apply_preset(window, 3);
    QVERIFY(window.runSeries()->series().has_value());
    window.newExperiment();
    QVERIFY(!window.runSeries()->series().has_value());
    QVERIFY(window.applyPreset(QStringLiteral("gpipe")));
    QVERIFY(!window.runSeries()->series().has_value());
  }
};

QTEST_MAIN(RunSeriesTest)
#include "run_series_test.moc"
