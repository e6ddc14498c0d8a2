// The cluster in the app: the Parallelism panel chooses the device and the
// node count and says which groups cross the network; the statistics show
// the predicted MFU beside the step time; a cluster too small is refused.
#include <QCheckBox>
#include <QComboBox>
#include <QLabel>
#include <QSpinBox>
#include <QWheelEvent>
#include <QtTest>

#include "core/io/experiment_io.h"
#include "ui/main_window.h"
#include "ui/models/experiment_document.h"
#include "ui/models/prediction_updater.h"
#include "ui/panels/cluster_picture.h"
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

  // The picture: a box per node, a square per device coloured by its stage.
  // tp 4 x pp 2 x dp 2 on DGX H100s: Megatron's order puts a replica's two
  // stages' shards side by side, so node 0 holds stage 0 of both replicas and
  // node 1 stage 1, and every tensor-parallel group stays in one box.
  void thePictureDrawsEachNodesDevicesByStage() {
    MainWindow window;
    window.document()->edit([](Experiment& e) {
      e.simulation.profile = "h100";
      e.parallel.dp = 2;
      e.parallel.tp = 4;
      e.parallel.pp = 2;
    });
    ClusterPicture* picture = window.parallelPanel()->clusterPicture();
    QCOMPARE(picture->nodesUsed(), 2);
    QCOMPARE(picture->devicesPerNode(), 8);
    for (int node = 0; node < 2; ++node)
      for (int slot = 0; slot < 8; ++slot) {
        const int device = picture->deviceInSlot(node, slot);
        QVERIFY(device >= 0);
        const DeviceCoord at = picture->coordOf(device);
        QCOMPARE(at.pipeline_rank, node);
        QCOMPARE(at.shard, slot % 4);
        QCOMPARE(at.replica, slot / 4);
      }
    QVERIFY(picture->moreText().isEmpty());
    QVERIFY(picture->sizeHint().height() > 0);
    QVERIFY(!picture->grab().isNull());

    // Three devices on one node: the other five slots are empty.
    window.document()->edit([](Experiment& e) {
      e.parallel.dp = 3;
      e.parallel.tp = 1;
      e.parallel.pp = 1;
    });
    QCOMPARE(picture->nodesUsed(), 1);
    QCOMPARE(picture->deviceInSlot(0, 2), 2);
    QCOMPARE(picture->deviceInSlot(0, 3), -1);

    // A large run is drawn by its first nodes and says how many more.
    window.document()->edit([](Experiment& e) {
      e.parallel.dp = 16;
      e.parallel.tp = 8;
      e.parallel.pp = 4;
    });
    QCOMPARE(picture->nodesUsed(), 64);
    QCOMPARE(picture->nodesDrawn(), ClusterPicture::kMaxDrawnNodes);
    QVERIFY2(picture->moreText().contains(QStringLiteral("56 more nodes")),
             qPrintable(picture->moreText()));

    // Unit costs have no hardware: nothing is drawn.
    window.document()->edit([](Experiment& e) { e.simulation.profile = "unit"; });
    QCOMPARE(picture->nodesUsed(), 0);
    QCOMPARE(picture->sizeHint().height(), 0);
  }

  // Scrolling the panel with the wheel passes over its fields: an unfocused
  // combo box or spin box keeps its value (the panel scrolls instead); once
  // clicked or tabbed to, the wheel changes it as usual.
  void theWheelChangesAFieldOnlyOnceItHasTheFocus() {
    MainWindow window;
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    window.document()->edit([](Experiment& e) { e.parallel.dp = 2; });
    QComboBox* zero = window.parallelPanel()->zeroCombo();
    const auto wheel_down = [](QWidget* field) {
      const QPointF at(field->width() / 2.0, field->height() / 2.0);
      QWheelEvent event(at, field->mapToGlobal(at), QPoint(), QPoint(0, -120), Qt::NoButton,
                        Qt::NoModifier, Qt::NoScrollPhase, false);
      QCoreApplication::sendEvent(field, &event);
    };
    QCOMPARE(zero->focusPolicy(), Qt::StrongFocus);
    const int before = zero->currentIndex();
    wheel_down(zero);
    QCOMPARE(zero->currentIndex(), before);
    QCOMPARE(window.document()->experiment().parallel.zero, 0);
    zero->setFocus();
    QTRY_VERIFY(zero->hasFocus());
    wheel_down(zero);
    QCOMPARE(zero->currentIndex(), before + 1);
    QSpinBox* nodes = window.parallelPanel()->nodesSpin();
    const int nodes_before = nodes->value();
    wheel_down(nodes);
    QCOMPARE(nodes->value(), nodes_before);
  }

  // Full recomputation's unit: the stage (what the executors run) or, for a
  // Transformer, each block as Megatron-LM keeps it.
  void theRecomputationUnitIsChosenInThePanel() {
    MainWindow window;
    QVERIFY(window.applyPreset("fsdp"));  // a tiny GPT
    window.document()->edit([](Experiment& e) {
      e.parallel.recompute = false;
      e.parallel.selective_recompute = false;
    });
    ParallelPanel* panel = window.parallelPanel();
    QVERIFY(!panel->blockRecomputeCheck()->isEnabled());
    panel->recomputeCheck()->setChecked(true);
    QVERIFY(window.document()->experiment().parallel.recompute);
    QVERIFY(!window.document()->experiment().parallel.recompute_blocks);
    QVERIFY(panel->blockRecomputeCheck()->isEnabled());
    QVERIFY(!panel->recomputeLayersSpin()->isEnabled());
    panel->blockRecomputeCheck()->setChecked(true);
    QVERIFY(window.document()->experiment().parallel.recompute_blocks);
    // Blocks rebuilt two at a time (Megatron-LM's --recompute-num-layers).
    QVERIFY(panel->recomputeLayersSpin()->isEnabled());
    panel->recomputeLayersSpin()->setValue(2);
    QCOMPARE(window.document()->experiment().parallel.recompute_layers, 2);
    QVERIFY(validate_experiment(window.document()->experiment()).empty());
    // Without full recomputation there is no unit, nor a group of blocks.
    panel->recomputeCheck()->setChecked(false);
    QVERIFY(!window.document()->experiment().parallel.recompute_blocks);
    QCOMPARE(window.document()->experiment().parallel.recompute_layers, 1);
    QVERIFY(validate_experiment(window.document()->experiment()).empty());
    QVERIFY(!panel->blockRecomputeCheck()->isChecked());
    QVERIFY(!panel->blockRecomputeCheck()->isEnabled());
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
