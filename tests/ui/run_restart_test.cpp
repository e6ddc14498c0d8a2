// Run, Stop and Run again in quick succession, as an impatient user clicks:
// each new run replaces the last one's executor and event sink while the old
// one may still be preparing or stopping. The window must stay alive and end
// each sequence with a run that does what was asked.
#include <QRandomGenerator>
#include <QtTest>

#include "ui/main_window.h"
#include "ui/models/experiment_document.h"
#include "ui/models/run_controller.h"
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
};

QTEST_MAIN(RunRestartTest)
#include "run_restart_test.moc"
