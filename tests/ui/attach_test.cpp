// pipelab --attach: the window follows a run that trains elsewhere through
// its live stream, and shows the run's experiment, timeline and loss.
#include <QStatusBar>
#include <QtTest>

#include "core/io/experiment_io.h"
#include "core/live/live_server.h"
#include "ui/main_window.h"
#include "ui/panels/training_view.h"
#include "ui/models/experiment_document.h"
#include "ui/models/run_controller.h"
#include "ui_test_support.h"

using namespace pipelab;

// What a served run says first: its experiment, two steps.
LiveHello hello_for(const Experiment& experiment) {
  LiveHello hello;
  hello.experiment_json = experiment_to_json(experiment);
  hello.steps_total = 2;
  return hello;
}

class AttachTest : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() { testing::use_test_settings(); }

  void attachedRunShowsItsExperimentAndEvents() {
    Experiment experiment = testing::short_experiment(2);
    experiment.name = "trains elsewhere";
    LiveServer server(0, {"127.0.0.1"}, hello_for(experiment));
    EventBatch batch;
    batch.events.push_back({0, Op{}, 0.001, 0.002, 0});
    batch.events.push_back({1, Op{}, 0.002, 0.003, 0});
    batch.steps.push_back(StepMetrics{});
    batch.steps.back().loss = 0.5;
    server.publish(batch);
    server.end(RunState::Finished, "");

    MainWindow window;
    window.show();
    window.attachTo(QStringLiteral("127.0.0.1:%1").arg(server.port()));
    QTRY_COMPARE_WITH_TIMEOUT(window.runController()->phase(), RunController::Phase::Finished,
                              10000);
    QCOMPARE(QString::fromStdString(window.document()->experiment().name),
             QStringLiteral("trains elsewhere"));
    QCOMPARE(int(window.runController()->trace().events.size()), 2);
    QCOMPARE(window.runController()->stepsDone(), 1);
  }

  // A run over processes whose rank fails: rank 0 ends the stream with the
  // failure, and the window names the rank where a student looks.
  void aFailedRankIsNamedInTheWindow() {
    LiveServer server(0, {"127.0.0.1"}, hello_for(testing::short_experiment(2)));
    EventBatch batch;
    batch.events.push_back({0, Op{}, 0.001, 0.002, 0});
    server.publish(batch);
    const std::string failure =
        "rank 2 has not answered for 2.1 s (it died, stopped or its network is cut); stopping the run";
    server.end(RunState::Failed, failure);

    MainWindow window;
    window.show();
    window.attachTo(QStringLiteral("127.0.0.1:%1").arg(server.port()));
    QTRY_COMPARE_WITH_TIMEOUT(window.runController()->phase(), RunController::Phase::Failed, 10000);
    QVERIFY2(window.runController()->errorText().contains(QStringLiteral("rank 2 has not answered")),
             qPrintable(window.runController()->errorText()));
    QVERIFY2(window.statusBar()->currentMessage().contains(QStringLiteral("rank 2")),
             qPrintable(window.statusBar()->currentMessage()));
    QVERIFY2(window.trainingView()->runError().contains(QStringLiteral("rank 2")),
             qPrintable(window.trainingView()->runError()));
    // What the rank had sent before it failed stays on the timeline.
    QCOMPARE(int(window.runController()->trace().events.size()), 1);
  }

  void nothingListeningFailsWithTheReason() {
    MainWindow window;
    window.attachTo(QStringLiteral("127.0.0.1:1"));
    QTRY_COMPARE_WITH_TIMEOUT(window.runController()->phase(), RunController::Phase::Failed, 10000);
    QVERIFY2(window.runController()->errorText().contains(QStringLiteral("--serve")),
             qPrintable(window.runController()->errorText()));
  }
};

QTEST_MAIN(AttachTest)
#include "attach_test.moc"
