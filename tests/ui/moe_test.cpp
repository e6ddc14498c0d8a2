// Mixture-of-Experts in the app: the two MoE templates, the layer table's
// experts column and its refusals, the expert-parallel preset's all-to-alls in
// the predicted timeline, and the training view's per-expert load chart after
// a short run, its legend clear of the bars.
#include <QComboBox>
#include <QDockWidget>
#include <QMessageBox>
#include <QSignalSpy>
#include <QtTest>

#include "core/sim/experiment_prediction.h"
#include "ui/language.h"
#include "ui/main_window.h"
#include "ui/models/experiment_document.h"
#include "ui/models/layer_table_model.h"
#include "ui/models/model_templates.h"
#include "ui/models/prediction_updater.h"
#include "ui/models/presets.h"
#include "ui/models/run_controller.h"
#include "ui/panels/expert_load_chart.h"
#include "ui/panels/model_panel.h"
#include "ui/panels/training_view.h"
#include "ui_test_support.h"

using namespace pipelab;

class MoeTest : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() { testing::use_test_settings(); }

  void templatesFillTheTableWithExperts() {
    ExperimentDocument document;
    ModelPanel panel(&document);
    for (const char* id : {"moe-switch", "moe-gshard"}) {
      const int index = panel.templateCombo()->findData(QString::fromLatin1(id));
      QVERIFY2(index > 0, id);
      panel.applyTemplate(index);
      LayerTableModel* table = panel.layerModel();
      // Switch's and GShard's blocks: each block's MLP is the experts.
      QCOMPARE(table->index(2, LayerTableModel::TypeColumn).data().toString(),
               QString("transformer_block"));
      const QString top = QString::fromLatin1(id) == "moe-switch" ? "1" : "2";
      QCOMPARE(table->index(2, LayerTableModel::SizeColumn).data().toString(),
               QString("4 heads, 4 experts, top-%1").arg(top));
    }
    QCOMPARE(document.experiment().parallel.ep, 4);
    // A moe layer after the first block: its size column is its experts.
    document.edit([](Experiment& e) {
      LayerSpec moe;
      moe.type = LayerType::Moe;
      moe.experts = 4;
      moe.top_k = 2;
      e.model.layers.insert(e.model.layers.begin() + 2, moe);
    });
    LayerTableModel* table = panel.layerModel();
    QCOMPARE(table->index(2, LayerTableModel::SizeColumn).data().toString(),
             QString("4 experts, top-2"));
    QVERIFY(table->setData(table->index(2, LayerTableModel::SizeColumn), 8));
    QCOMPARE(document.experiment().model.layers[2].experts, 8);
    QSignalSpy rejected(table, &LayerTableModel::editRejected);
    QVERIFY(
        !table->setData(table->index(2, LayerTableModel::SizeColumn), 1));  // fewer than top_k = 2
    QCOMPARE(rejected.count(), 1);
    QVERIFY(rejected.first().first().toString().contains("at least top_k = 2"));
  }

  void expertParallelPresetShowsAllToAllsOnTheCommunicationRow() {
    MainWindow window;
    window.setSaveQuestion([](const QString&) { return QMessageBox::Discard; });
    QVERIFY(window.applyPreset("expert-parallel"));
    QCOMPARE(window.document()->experiment().parallel.ep, 4);
    window.predictor()->updateNow();
    const auto& events = window.predictor()->prediction()->result.trace.events;
    const auto all_to_alls = std::count_if(events.begin(), events.end(), [](const TraceEvent& e) {
      return e.op.kind == OpKind::AllToAll && e.op.group == CommGroup::ExpertParallel &&
             e.t_end > e.t_begin;
    });
    // Four devices, two micro-batches, two moe layers, two exchanges each way.
    QCOMPARE(int(all_to_alls), 4 * 2 * 2 * 4);
  }

  void aRunDrawsTheLatestStepsExpertLoad() {
    MainWindow window;
    window.resize(1400, 900);
    window.show();
    Experiment experiment;
    for (const ModelTemplate& model_template : model_templates())
      if (model_template.id == QLatin1String("moe-switch"))
        experiment = load_model_template(model_template);
    experiment.training.steps = 3;
    experiment.training.eval_every = 0;
    window.document()->replace(experiment, QString(), false);
    window.speedCombo()->setCurrentIndex(window.speedCombo()->findData(RunController::kLive));
    ExpertLoadChart* chart = window.trainingView()->expertLoadChart();
    QVERIFY(chart->isHidden());
    auto* dock = window.findChild<QDockWidget*>(QStringLiteral("expertLoadDock"));
    QVERIFY(dock);
    QVERIFY(!dock->isVisible());  // no step with experts yet
    QVERIFY(window.startRun());
    QTRY_COMPARE_WITH_TIMEOUT(window.runController()->phase(), RunController::Phase::Finished,
                              20000);
    QTRY_VERIFY(!chart->isHidden());
    QTRY_VERIFY(dock->isVisible());  // its dock opens beside the loss
    QTRY_VERIFY(dock->width() >= 200);  // wide enough for a bar per expert, once laid out
    QCOMPARE(chart->barCount(), 2 * 4);  // two blocks of four experts
    const StepMetrics& last = window.runController()->trace().steps.back();
    double dropped = 0;
    for (const ExpertLoad& load : last.expert_load)
      for (int64_t tokens : load.dropped) dropped += double(tokens);
    // The chart may still show an earlier step of the live playback: wait for the last.
    QTRY_COMPARE(chart->droppedShown(), dropped);
  }

  void theChartHidesWithoutExperts() {
    ExpertLoadChart chart;
    StepMetrics plain;
    chart.showStep(&plain);
    QVERIFY(chart.isHidden());
    StepMetrics moe;
    moe.expert_load.push_back({3, {10, 6}, {2, 0}});
    chart.showStep(&moe);
    QVERIFY(!chart.isHidden());
    QCOMPARE(chart.barCount(), 2);
    QCOMPARE(chart.droppedShown(), 2.0);
  }

  // In a short dock (the chart's minimum height) the legend sits above the
  // tallest bar, in English and in Chinese.
  void theLegendLeavesTheBarsClear() {
    for (const char* language : {"en", "zh_CN"}) {
      QVERIFY(apply_language(QString::fromLatin1(language)));
      ExpertLoadChart chart;
      chart.resize(420, chart.minimumHeight());
      StepMetrics moe;
      moe.expert_load.push_back({2, {300, 500, 200, 600}, {0, 20, 0, 40}});
      moe.expert_load.push_back({4, {400, 400, 400, 400}, {0, 0, 0, 0}});
      chart.showStep(&moe);
      chart.replot();
      const double tallest_bar_top = chart.yAxis->coordToPixel(600);
      QVERIFY2(chart.legend->outerRect().bottom() <= tallest_bar_top,
               qPrintable(QStringLiteral("%1: legend bottom %2, bar top %3")
                              .arg(language)
                              .arg(chart.legend->outerRect().bottom())
                              .arg(tallest_bar_top)));
    }
    QVERIFY(apply_language(QStringLiteral("en")));
  }
};

QTEST_MAIN(MoeTest)
#include "moe_test.moc"
