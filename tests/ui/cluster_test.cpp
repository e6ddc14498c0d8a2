// The cluster in the app: the Parallelism panel chooses the device and the
// node count and says which groups cross the network; the statistics show
// the predicted MFU beside the step time; a cluster too small is refused.
#include <QCheckBox>
#include <QComboBox>
#include <QLabel>
#include <QSpinBox>
#include <QtTest>

#include "core/io/experiment_io.h"
#include "ui/main_window.h"
#include "ui/models/experiment_document.h"
#include "ui/models/prediction_updater.h"
#include "ui/panels/parallel_panel.h"
#include "ui/panels/stats_panel.h"
#include "ui_test_support.h"

using namespace pipelab;

class ClusterTest : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() { testing::use_test_settings(); }

  void theNodesAndWhatCrossesThemAreShown() {
    MainWindow window;
    window.document()->edit([](Experiment& e) {
      e.simulation.profile = "h100";
      e.parallel.dp = 2;
      e.parallel.pp = 2;
      e.parallel.tp = 1;
    });
    ParallelPanel* panel = window.parallelPanel();
    // Four devices fit one DGX H100: nothing crosses the network.
    QVERIFY2(panel->clusterLabel()->text().contains(QStringLiteral("1 × NVIDIA DGX H100")),
             qPrintable(panel->clusterLabel()->text()));
    QVERIFY(panel->clusterLabel()->text().contains(QStringLiteral("every group stays inside one node")));

    // Sixteen devices on one node chosen by hand: refused, with what to do.
    panel->nodesSpin()->setValue(1);
    QCOMPARE(window.document()->experiment().simulation.cluster.nodes, 1);
    window.document()->edit([](Experiment& e) { e.parallel.dp = 8; });
    QVERIFY2(panel->clusterLabel()->text().contains(QStringLiteral("raise simulation.cluster.nodes to 2")),
             qPrintable(panel->clusterLabel()->text()));
    panel->nodesSpin()->setValue(0);  // as many as needed
    QVERIFY2(panel->clusterLabel()->text().contains(QStringLiteral("2 × NVIDIA DGX H100")),
             qPrintable(panel->clusterLabel()->text()));
    QVERIFY(panel->clusterLabel()->text().contains(QStringLiteral("pipeline sends")));

    QVERIFY(panel->overlapCheck()->isChecked());
    panel->overlapCheck()->setChecked(false);
    QVERIFY(!window.document()->experiment().simulation.overlap_grad_reduce);
  }

  void theZeroStageAndFsdpsReshardingAreChosenInThePanel() {
    MainWindow window;
    window.document()->edit([](Experiment& e) {
      e.parallel.dp = 2;
      e.parallel.pp = 1;
    });
    ParallelPanel* panel = window.parallelPanel();
    // Keeping the gathered weights means something under ZeRO 3 only.
    QVERIFY(!panel->reshardCheck()->isEnabled());
    QVERIFY(panel->reshardCheck()->isChecked());
    panel->zeroCombo()->setCurrentIndex(panel->zeroCombo()->findData(3));
    emit panel->zeroCombo()->activated(panel->zeroCombo()->currentIndex());
    QCOMPARE(window.document()->experiment().parallel.zero, 3);
    QVERIFY(panel->reshardCheck()->isEnabled());
    panel->reshardCheck()->setChecked(false);
    QVERIFY(!window.document()->experiment().parallel.reshard_after_forward);
    // Back to ZeRO 2: the switch returns to its default, as it has no meaning there.
    panel->zeroCombo()->setCurrentIndex(panel->zeroCombo()->findData(2));
    emit panel->zeroCombo()->activated(panel->zeroCombo()->currentIndex());
    QVERIFY(window.document()->experiment().parallel.reshard_after_forward);
    QVERIFY(!panel->reshardCheck()->isEnabled());
    QVERIFY(panel->reshardCheck()->isChecked());
  }

  void thePredictedStepShowsItsMfu() {
    MainWindow window;
    window.document()->edit([](Experiment& e) { e.simulation.profile = "h100"; });
    window.predictor()->updateNow();
    QTRY_VERIFY2(window.statsPanel()->throughputText().contains(QStringLiteral("MFU")),
                 qPrintable(window.statsPanel()->throughputText()));
    window.document()->edit([](Experiment& e) { e.simulation.profile = "unit"; });
    window.predictor()->updateNow();
    QTRY_VERIFY(!window.statsPanel()->throughputText().contains(QStringLiteral("MFU")));
  }
};

QTEST_MAIN(ClusterTest)
#include "cluster_test.moc"
