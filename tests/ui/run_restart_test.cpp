// Run, Stop and Run again in quick succession, as an impatient user clicks:
// each new run replaces the last one's executor and event sink while the old
// one may still be preparing or stopping. The window must stay alive and end
// each sequence with a run that does what was asked.
#include <QRandomGenerator>
#include <QSignalSpy>
#include <QtTest>

#include "ui/main_window.h"
#include "ui/models/experiment_document.h"
#include "ui/models/run_controller.h"
#include "ui/models/run_series_controller.h"
#include "ui_test_support.h"

using namespace pipelab;

class RunRestartTest : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() { testing::use_test_settings(); }

  void runStopRunWithinMilliseconds() {
    MainWindow window;
    window.setSaveQuestion([](const QString&) { return QMessageBox::Discard; });
    QVERIFY(window.applyPreset(QStringLiteral("1f1b-memory")));
    window.document()->edit([](Experiment& experiment) { experiment.parallel.microbatches = 4; });
    QRandomGenerator random(7);
    const int rounds = qEnvironmentVariableIntValue("RESTART_ROUNDS") ? qEnvironmentVariableIntValue("RESTART_ROUNDS") : 60;
    for (int round = 0; round < rounds; ++round) {
      window.runOrPause();
      QTest::qWait(random.bounded(40));
      window.stopRun();
      QTest::qWait(random.bounded(40));
    }
    window.runOrPause();
    QTRY_VERIFY_WITH_TIMEOUT(window.runController()->phase() == RunController::Phase::Finished, 60000);
    QVERIFY(!window.runController()->trace().steps.empty());
  }

  void runControlsInAnyOrderOnAPairOfRuns() {
    // A preset that trains two runs one after the other: the second starts
    // from a queued signal, so a Stop or Reset can land between the two.
    MainWindow window;
    window.setSaveQuestion([](const QString&) { return QMessageBox::Discard; });
    QVERIFY(window.applyPreset(QStringLiteral("gpipe-memory")));
    window.document()->edit([](Experiment& experiment) { experiment.training.steps = 3; });
    QRandomGenerator random(11);
    const int rounds = qEnvironmentVariableIntValue("RESTART_ROUNDS") ? qEnvironmentVariableIntValue("RESTART_ROUNDS") : 60;
    for (int round = 0; round < rounds; ++round) {
      switch (random.bounded(5)) {
        case 0: case 1: window.runOrPause(); break;
        case 2: window.stepOnce(); break;
        case 3: window.stopRun(); break;
        case 4: window.resetRun(); break;
      }
      QTest::qWait(random.bounded(40));
    }
    window.resetRun();
    QSignalSpy finished(window.runSeries(), &RunSeriesController::finished);
    window.runOrPause();
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 60000);
    QCOMPARE(window.runController()->phase(), RunController::Phase::Finished);
  }
};

QTEST_MAIN(RunRestartTest)
#include "run_restart_test.moc"
