// A short CPU run fills the timeline, memory and training views; pause, step
// and stop do what they say; run errors appear in the window.
#include <QComboBox>
#include <QSlider>
#include <QTemporaryDir>
#include <QtTest>

#include "ui/main_window.h"
#include "ui/models/experiment_document.h"
#include "ui/models/run_controller.h"
#include "ui/panels/data_panel.h"
#include "ui/panels/memory_view.h"
#include "ui/panels/parallel_panel.h"
#include "ui/panels/problem_label.h"
#include "ui/panels/stats_panel.h"
#include "ui/panels/training_view.h"
#include "ui/timeline/timeline_chart.h"
#include "ui/timeline/timeline_plottable.h"
#include "ui/timeline/timeline_view.h"
#include "ui_test_support.h"

using namespace pipelab;

namespace {

constexpr int kRunTimeoutMs = 20000;

// Playback that shows every event as soon as it is recorded.
void follow_live(MainWindow& window) {
  window.speedCombo()->setCurrentIndex(window.speedCombo()->findData(RunController::kLive));
}

bool finished_or_stopped(RunController::Phase phase) {
  return phase == RunController::Phase::Finished || phase == RunController::Phase::Stopped ||
         phase == RunController::Phase::Failed;
}

}  // namespace

class RunControlsTest : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() { testing::use_test_settings(); }

  void shortRunFillsTimelineMemoryAndLoss() {
    MainWindow window;
    window.resize(1400, 900);
    window.show();
    window.document()->replace(testing::short_experiment(4), QString(), false);
    follow_live(window);
    QVERIFY(window.startRun());
    QTRY_VERIFY_WITH_TIMEOUT(finished_or_stopped(window.runController()->phase()), kRunTimeoutMs);
    QCOMPARE(window.runController()->phase(), RunController::Phase::Finished);
    QCOMPARE(window.runController()->stepsDone(), 4);

    const Trace& trace = window.runController()->trace();
    QVERIFY(!trace.events.empty());
    QCOMPARE(int(trace.steps.size()), 4);
    // Live speed: the views show everything recorded.
    TimelinePlottable* bars = window.timelineView()->measuredChart()->bars();
    QTRY_COMPARE(bars->eventCount(), int(trace.events.size()));
    QCOMPARE(bars->shownEventCount(), int(trace.events.size()));
    QCOMPARE(window.timelineView()->measuredChart()->rowCount(),
             window.document()->experiment().parallel.devices());
    // Every device did forwards and backwards.
    for (int device = 0; device < window.document()->experiment().parallel.devices(); ++device) {
      const bool has_forward = std::any_of(
          trace.events.begin(), trace.events.end(),
          [&](const TraceEvent& e) { return e.device == device && e.op.kind == OpKind::Forward; });
      QVERIFY(has_forward);
    }
    QTRY_VERIFY(window.memoryView()->showsMeasured());
    QVERIFY(window.memoryView()->plottedPointCount() > 0);
    QVERIFY(window.memoryView()->shownPeakBytes() > 0);
    QTRY_COMPARE(window.trainingView()->plottedStepCount(), 4);
    QVERIFY(window.statsPanel()->bubbleText().contains("measured"));
    QVERIFY(!window.statsPanel()->bubbleText().contains("measured —"));
    // The configuration is editable again once the run is over.
    QVERIFY(window.parallelPanel()->isEnabled());
  }

  void aLongRunKeepsItsLossButStopsRecordingAtTheLimit() {
    // Thousands of micro-batches over many steps would fill the app's memory
    // with events and samples: past the limit only the steps are kept.
    MainWindow window;
    window.document()->replace(testing::short_experiment(4), QString(), false);
    window.runController()->setRecordLimit(60);
    QVERIFY(window.startRun());
    QTRY_VERIFY_WITH_TIMEOUT(finished_or_stopped(window.runController()->phase()), kRunTimeoutMs);
    QCOMPARE(window.runController()->phase(), RunController::Phase::Finished);
    // Whole batches (what the workers recorded between two drains) are kept or dropped.
    const Trace& trace = window.runController()->trace();
    QVERIFY(trace.events.size() + trace.memory.size() <= 60);
    QCOMPARE(int(trace.steps.size()), 4);
    QVERIFY(window.runController()->recordingLimited());
    QVERIFY2(window.notice().contains(QStringLiteral("the loss and the statistics of every step go on")),
             qPrintable(window.notice()));
    // A new run starts recording afresh.
    window.runController()->setRecordLimit(RunController::kDefaultRecordLimit);
    QVERIFY(window.startRun());
    QVERIFY(!window.runController()->recordingLimited());
    QTRY_VERIFY_WITH_TIMEOUT(finished_or_stopped(window.runController()->phase()), kRunTimeoutMs);
    QVERIFY(!window.runController()->trace().events.empty());
  }

  void stepPauseResumeAndStop() {
    MainWindow window;
    // Far more steps than the test lets run: the default model does a step in
    // well under a millisecond, so a short run could finish before the pause.
    constexpr int kSteps = 1000000;
    window.document()->replace(testing::short_experiment(kSteps), QString(), false);
    RunController* run = window.runController();

    window.stepOnce();  // from idle: a paused run that does one step
    QTRY_VERIFY_WITH_TIMEOUT(run->phase() == RunController::Phase::Paused && run->stepsDone() == 1,
                             kRunTimeoutMs);
    QTRY_COMPARE(int(run->trace().steps.size()), 1);
    window.stepOnce();
    QTRY_VERIFY_WITH_TIMEOUT(run->stepsDone() == 2 && run->phase() == RunController::Phase::Paused,
                             kRunTimeoutMs);
    // Paused stays paused: nothing more happens.
    QTest::qWait(150);
    QCOMPARE(run->stepsDone(), 2);

    window.runOrPause();  // resume
    QTRY_VERIFY_WITH_TIMEOUT(run->stepsDone() > 2, kRunTimeoutMs);
    window.runOrPause();  // pause
    QTRY_COMPARE_WITH_TIMEOUT(run->phase(), RunController::Phase::Paused, kRunTimeoutMs);
    const int paused_at = run->stepsDone();
    QTest::qWait(150);
    QCOMPARE(run->stepsDone(), paused_at);

    window.runOrPause();
    window.stopRun();
    QTRY_COMPARE_WITH_TIMEOUT(run->phase(), RunController::Phase::Stopped, kRunTimeoutMs);
    QVERIFY(run->stepsDone() < kSteps);
    QVERIFY(!run->trace().events.empty());  // what was recorded stays

    window.resetRun();
    QCOMPARE(run->phase(), RunController::Phase::Idle);
    // Back to the empty chart with the plan's rows, ready for the next run.
    QCOMPARE(window.timelineView()->measuredChart()->rowCount(),
             window.document()->experiment().parallel.devices());
    QVERIFY(run->trace().events.empty());
    QCOMPARE(window.timelineView()->measuredChart()->bars()->eventCount(), 0);
  }

  void keyboardShortcutsStepAndRun() {
    MainWindow window;
    window.document()->replace(testing::short_experiment(50), QString(), false);
    window.show();
    window.activateWindow();
    QVERIFY(QTest::qWaitForWindowActive(&window));
    RunController* run = window.runController();
    // With the micro-batch slider focused, Right moves the slider, not the run.
    QSlider* slider = window.parallelPanel()->microbatchSlider();
    slider->setFocus();
    const int position = slider->value();
    QTest::keyClick(slider, Qt::Key_Right);
    QCOMPARE(slider->value(), position + 1);
    QCOMPARE(run->phase(), RunController::Phase::Idle);
    window.setFocus();
    QTest::keyClick(&window, Qt::Key_Right);  // one step
    QTRY_VERIFY_WITH_TIMEOUT(run->stepsDone() == 1 && run->phase() == RunController::Phase::Paused,
                             kRunTimeoutMs);
    QTest::keyClick(&window, Qt::Key_Space);  // run on
    QTRY_VERIFY_WITH_TIMEOUT(run->stepsDone() > 1, kRunTimeoutMs);
    QTest::keyClick(&window, Qt::Key_Escape);  // stop
    QTRY_VERIFY_WITH_TIMEOUT(!run->isActive(), kRunTimeoutMs);
  }

  void slowPlaybackRevealsEventsGradually() {
    MainWindow window;
    window.document()->replace(testing::short_experiment(3), QString(), false);
    window.speedCombo()->setCurrentIndex(window.speedCombo()->findData(0.0001));
    RunController* run = window.runController();
    QVERIFY(window.startRun());
    QTRY_VERIFY_WITH_TIMEOUT(!run->isActive(), kRunTimeoutMs);
    // Recorded, but the replay has only just begun.
    QVERIFY(run->recordedTime() > 0);
    QVERIFY(run->playbackTime() < run->recordedTime());
    TimelinePlottable* bars = window.timelineView()->measuredChart()->bars();
    QVERIFY(bars->shownEventCount() < bars->eventCount());
    run->catchUp();
    QCOMPARE(run->playbackTime(), run->recordedTime());
    QCOMPARE(bars->shownEventCount(), bars->eventCount());
  }

  void divergedRunSaysSoNextToTheLearningRate() {
    MainWindow window;
    window.document()->edit([](Experiment& e) {
      e.training.steps = 60;
      e.training.optimizer.type = "sgd";
      e.training.optimizer.momentum = 0.9;
      e.training.optimizer.lr = 1e6;
    });
    RunController* run = window.runController();
    QVERIFY(window.startRun());
    QTRY_VERIFY_WITH_TIMEOUT(!run->isActive(), kRunTimeoutMs);
    QCOMPARE(run->phase(), RunController::Phase::Failed);
    QVERIFY(run->errorText().contains("diverged"));
    bool shown_in_data_panel = false;
    for (ProblemLabel* label : window.dataPanel()->findChildren<ProblemLabel*>())
      for (const QString& problem : label->problems())
        shown_in_data_panel |= problem.contains("diverged");
    QVERIFY(shown_in_data_panel);
    QVERIFY(window.trainingView()->runError().contains("diverged"));
    // Fixing the learning rate clears the complaint.
    window.document()->edit([](Experiment& e) { e.training.optimizer.lr = 0.05; });
    QVERIFY(!window.shownProblems().join(' ').contains("diverged"));
  }

  void malformedDataFileFailsTheRunWithTheReasonInTheDataPanel() {
    QTemporaryDir folder;
    QVERIFY(folder.isValid());
    const QString csv = folder.filePath("broken.csv");
    QVERIFY(testing::write_text(csv, "label,x,y\n0,1.0,2.0\n1,oops\n"));
    MainWindow window;
    window.document()->edit([&](Experiment& e) {
      e.data.source = "csv";
      e.data.path = csv.toStdString();
      e.data.resolved_path = csv.toStdString();
      e.model.input = {2};
    });
    RunController* run = window.runController();
    // The experiment is valid (the file's contents are what is wrong), so the run starts.
    QVERIFY2(window.startRun(), qPrintable(window.shownProblems().join("; ")));
    QTRY_COMPARE_WITH_TIMEOUT(run->phase(), RunController::Phase::Failed, kRunTimeoutMs);
    QVERIFY(!run->errorText().isEmpty());
    // The window is still here, and says why next to the data settings.
    bool shown_in_data_panel = false;
    for (ProblemLabel* label : window.dataPanel()->findChildren<ProblemLabel*>())
      for (const QString& problem : label->problems())
        shown_in_data_panel |= problem.contains(run->errorText());
    QVERIFY(shown_in_data_panel);
    QVERIFY(window.trainingView()->runError().contains(run->errorText()));
  }
};

QTEST_MAIN(RunControlsTest)
#include "run_controls_test.moc"
