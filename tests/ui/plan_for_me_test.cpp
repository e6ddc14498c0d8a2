// Plan > Plan for me: the plan lands in the open experiment, the predicted
// timeline shows it, Undo plan puts the user's split back, and a plan that
// cannot be made leaves the experiment as it was.
#include <QComboBox>
#include <QLineEdit>
#include <QSignalSpy>
#include <QSpinBox>
#include <QStatusBar>
#include <QToolButton>
#include <QtTest>

#include "core/io/experiment_io.h"
#include "core/planner/plan_proposal.h"
#include "ui/main_window.h"
#include "ui/models/experiment_document.h"
#include "ui/models/plan_controller.h"
#include "ui/models/run_controller.h"
#include "ui/models/prediction_updater.h"
#include "ui/panels/parallel_panel.h"
#include "ui/panels/plan_dialog.h"
#include "ui/timeline/timeline_chart.h"
#include "ui/timeline/timeline_view.h"
#include "ui_test_support.h"

using namespace pipelab;

namespace {

QAction* action_named(const MainWindow& window, const QString& text) {
  for (QAction* action : window.findChildren<QAction*>())
    if (action->text() == text) return action;
  return nullptr;
}

}  // namespace

class PlanForMeTest : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() { testing::use_test_settings(); }

  void thePlanShowsInThePredictedTimelineAndUndoes() {
    MainWindow window;
    const Experiment before = window.document()->experiment();
    PlanRequest request;
    request.devices = 8;
    request.memory_per_device = int64_t{1} << 30;
    const PlanProposal expected = propose_plan(before, request);

    QSignalSpy applied(window.planController(), &PlanController::planApplied);
    window.planFor(request);
    QTRY_COMPARE(applied.count(), 1);
    const ParallelPlan& plan = window.document()->experiment().parallel;
    QCOMPARE(plan.dp, expected.experiment.parallel.dp);
    QCOMPARE(plan.pp, expected.experiment.parallel.pp);
    QCOMPARE(plan.microbatches, expected.experiment.parallel.microbatches);
    QVERIFY(window.document()->isDirty());
    QVERIFY(applied.front().front().toString().contains(QStringLiteral("predicted step")));

    // The predicted timeline draws one row per device of the plan, before anything runs.
    QTRY_COMPARE(window.timelineView()->predictedChart()->rowCount(), plan.devices());
    QVERIFY(window.planController()->canUndo());
    QVERIFY(action_named(window, QStringLiteral("&Undo plan"))->isEnabled());

    action_named(window, QStringLiteral("&Undo plan"))->trigger();
    QCOMPARE(experiment_to_json(window.document()->experiment()), experiment_to_json(before));
    QVERIFY(!window.planController()->canUndo());
  }

  void anEditAfterThePlanIsNeverUndoneSilently() {
    MainWindow window;
    PlanRequest request;
    request.devices = 4;
    request.memory_per_device = int64_t{1} << 30;
    QSignalSpy applied(window.planController(), &PlanController::planApplied);
    window.planFor(request);
    QTRY_COMPARE(applied.count(), 1);
    window.document()->edit([](Experiment& experiment) { experiment.training.steps += 1; });
    QVERIFY(!window.planController()->canUndo());
  }

  void runWaitsForAPlanOnItsWay() {
    // The plan replaces the split when it lands; a run started meanwhile would
    // be reset under the user.
    MainWindow window;
    PlanRequest request;
    request.devices = 4;
    request.memory_per_device = int64_t{1} << 30;
    QSignalSpy applied(window.planController(), &PlanController::planApplied);
    window.planFor(request);
    QVERIFY(window.planController()->isPlanning());
    QVERIFY(!action_named(window, QStringLiteral("&Run"))->isEnabled());
    window.runOrPause();
    window.stepOnce();
    QCOMPARE(window.runController()->phase(), RunController::Phase::Idle);
    QVERIFY(window.statusBar()->currentMessage().contains(QStringLiteral("Plan for me")));
    QTRY_COMPARE(applied.count(), 1);
    QVERIFY(action_named(window, QStringLiteral("&Run"))->isEnabled());
    QVERIFY(action_named(window, QStringLiteral("S&tep"))->isEnabled());
  }

  void tooLittleMemoryLeavesTheExperimentAndSaysWhatWorks() {
    MainWindow window;
    const std::string before = experiment_to_json(window.document()->experiment());
    PlanRequest request;
    request.devices = 4;
    request.memory_per_device = 1024;
    QSignalSpy failed(window.planController(), &PlanController::planFailed);
    window.planFor(request);
    QTRY_COMPARE(failed.count(), 1);
    QVERIFY(failed.front().front().toString().contains(QStringLiteral("smallest that works")));
    QVERIFY(window.notice().contains(QStringLiteral("smallest that works")));
    QCOMPARE(experiment_to_json(window.document()->experiment()), before);
    QVERIFY(!window.planController()->canUndo());
  }

  void theParallelPanelAndThePlanMenuOfferIt() {
    MainWindow window;
    QToolButton* button = nullptr;
    for (QToolButton* candidate : window.parallelPanel()->findChildren<QToolButton*>())
      if (candidate->defaultAction() &&
          candidate->defaultAction()->text().contains(QStringLiteral("Plan for me")))
        button = candidate;
    QVERIFY(button);
    QVERIFY(button->isEnabled());
    QAction* undo = action_named(window, QStringLiteral("&Undo plan"));
    QVERIFY(undo);
    QVERIFY(!undo->isEnabled());  // nothing planned yet
  }

  void theDialogAsksForAValidRequest() {
    Experiment experiment = default_experiment();
    experiment.simulation.profile = "h100";
    PlanDialog dialog(experiment);
    QVERIFY(dialog.request());  // the profile's memory, the experiment's devices
    QCOMPARE(dialog.request()->devices, experiment.parallel.devices());
    dialog.memoryEdit()->setText(QStringLiteral("lots"));
    QVERIFY(!dialog.request());
    dialog.memoryEdit()->setText(QStringLiteral("16GiB"));
    dialog.devicesSpin()->setValue(12);
    dialog.plannerCombo()->setCurrentIndex(1);
    QVERIFY(dialog.request());
    QCOMPARE(dialog.request()->memory_per_device, int64_t{16} << 30);
    QCOMPARE(dialog.request()->devices, 12);
    QCOMPARE(dialog.request()->planner, PlannerKind::PipeDream);
  }
};

QTEST_MAIN(PlanForMeTest)
#include "plan_for_me_test.moc"
