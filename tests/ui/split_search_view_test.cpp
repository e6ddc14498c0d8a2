// Plan > Search every split: the planner view searches on a background
// thread, draws every candidate (simulated and estimated, the Pareto front,
// the memory line), filters by dimension, and loads the chosen split into the
// experiment with one undo.
#include <qcustomplot.h>

#include <QApplication>
#include <QClipboard>
#include <QComboBox>
#include <QElapsedTimer>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTableWidget>
#include <QtTest>
#include <set>

#include "core/io/experiment_io.h"
#include "ui/language.h"
#include "ui/main_window.h"
#include "ui/models/experiment_document.h"
#include "ui/models/plan_controller.h"
#include "ui/models/split_search_model.h"
#include "ui/panels/split_search_dialog.h"
#include "ui_test_support.h"

using namespace pipelab;

namespace {

Experiment gpt2_small() {
  return load_experiment(std::string(PIPELAB_SOURCE_DIR) + "/examples/gpt2_small_predict.json");
}

QAction* action_named(const MainWindow& window, const QString& text) {
  for (QAction* action : window.findChildren<QAction*>())
    if (action->text() == text) return action;
  return nullptr;
}

}  // namespace

class SplitSearchViewTest : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() { testing::use_test_settings(); }

  void theModelMarksTheFrontAndFilters() {
    SearchRequest request;
    request.devices = 8;
    request.memory_per_device = int64_t{80} * 1000 * 1000 * 1000;
    const Experiment experiment = gpt2_small();
    SplitSearchModel model;
    model.setResult(search_splits(experiment, request), experiment.training.batch_size);
    QVERIFY(!model.points().empty());
    QCOMPARE(model.points().size(), model.candidates().size());
    // The front: fitting points none of which has both less memory and more throughput than
    // another.
    int front = 0;
    for (const auto& a : model.points()) {
      if (!a.pareto) continue;
      ++front;
      QVERIFY(a.fits);
      QVERIFY(a.simulated);  // an estimate may be optimistic: never on the front
      for (const auto& b : model.points())
        if (b.fits && b.simulated)
          QVERIFY(!(b.memory_bytes < a.memory_bytes && b.samples_per_s > a.samples_per_s));
    }
    QVERIFY(front > 0);
    // The fastest simulated fitting point is on the front, and it is the search's best plan.
    QVERIFY(model.fastestFitting()->pareto);
    QCOMPARE(model.fastestFitting()->candidate, model.candidateOfRank(1));

    const QStringList tps = model.values(SplitSearchModel::Tp);
    QVERIFY(tps.contains(QStringLiteral("1")));
    model.setFilter(SplitSearchModel::Tp, QStringLiteral("2"));
    QVERIFY(!model.points().empty());
    for (const auto& point : model.points())
      QCOMPARE(model.candidates()[point.candidate].plan.tp, 2);
    model.setFilter(SplitSearchModel::Tp, QString());
    QCOMPARE(model.points().size(), model.candidates().size());
  }

  // Why a plan was set aside: the app's English is the CLI's sentence, word for
  // word, and in Chinese every reason the search gives is Chinese with the same numbers.
  void setAsideReasonsReadInTheAppsLanguage() {
    SearchRequest request;
    request.devices = 64;
    request.memory_per_device = int64_t{80} * 1000 * 1000 * 1000;
    request.max_simulations = 12;
    const SearchResult result = search_splits(
        load_experiment(std::string(PIPELAB_SOURCE_DIR) + "/examples/llama_70b_predict.json"),
        request);
    std::set<PruneDetail> seen;
    for (const PrunedPlan& pruned : result.pruned) {
      seen.insert(pruned.detail);
      QCOMPARE(SplitSearchDialog::whyText(pruned), QString::fromStdString(pruned.why));
    }
    // Every kind but the bound one shows up in this search.
    for (const PruneDetail detail : {PruneDetail::Problem, PruneDetail::MemoryBound,
                                     PruneDetail::SimulatedSlower, PruneDetail::Estimated})
      QVERIFY2(seen.count(detail), qPrintable(QString::number(static_cast<int>(detail))));
    QVERIFY(apply_language(QStringLiteral("zh_CN")));
    for (const PrunedPlan& pruned : result.pruned) {
      if (pruned.detail == PruneDetail::Problem) continue;  // core's messages: issue 32's codes
      const QString chinese = SplitSearchDialog::whyText(pruned);
      QVERIFY2(chinese.contains(QRegularExpression(QStringLiteral("[\\x{4e00}-\\x{9fff}]"))),
               qPrintable(chinese));
      QVERIFY2(!chinese.contains(QStringLiteral(" over the ")) &&
                   !chinese.contains(QStringLiteral("simulated at")) &&
                   !chinese.contains(QStringLiteral("estimated at")),
               qPrintable(chinese));
    }
    QVERIFY(apply_language(QStringLiteral("en")));
  }

  void searchesDrawsAndLoadsTheChosenSplitWithOneUndo() {
    MainWindow window;
    window.document()->replace(gpt2_small(), QString(), true);
    const Experiment before = window.document()->experiment();
    QAction* open = action_named(window, QStringLiteral("&Search every split…"));
    QVERIFY(open);
    open->trigger();
    open->trigger();  // one view at a time: the second raises the first
    QCOMPARE(window.findChildren<SplitSearchDialog*>().size(), 1);
    auto* dialog = window.findChild<SplitSearchDialog*>();
    QVERIFY(dialog);
    dialog->devicesSpin()->setValue(8);
    QSignalSpy finished(dialog, &SplitSearchDialog::searchFinished);
    dialog->searchButton()->click();
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 30000);
    QCOMPARE(finished.front().front().toBool(), true);
    QVERIFY(dialog->plot()->graph(1)->dataCount() > 0);  // simulated points
    QVERIFY(dialog->plot()->graph(0)->dataCount() > 0);  // estimated points
    QVERIFY(dialog->plot()->graph(2)->dataCount() > 0);  // the front
    // The best plan is chosen at the start.
    QVERIFY(dialog->selectedCandidate().has_value());
    const SearchedPlan chosen = dialog->model().candidates()[*dialog->selectedCandidate()];
    QCOMPARE(split_label(chosen.plan), split_label(dialog->model().result().best.front().plan));
    QVERIFY(dialog->detailsLabel()->text().contains(QStringLiteral("Simulated")));
    // The table lists the best plans, fastest first, the chosen one selected;
    // the details give its memory by category and its rank.
    QTableWidget* best = dialog->bestTable();
    QCOMPARE(best->rowCount(), static_cast<int>(dialog->model().result().best.size()));
    QCOMPARE(best->item(0, 1)->text(), QString::fromStdString(split_label(chosen.plan)));
    QCOMPARE(best->selectedItems().front()->row(), 0);
    QVERIFY(dialog->detailsLabel()->text().contains(QStringLiteral("At its peak: weights")));
    QVERIFY(dialog->detailsLabel()->text().contains(QStringLiteral("activations")));
    QVERIFY(dialog->detailsLabel()->text().contains(QStringLiteral("plan 1 of")));
    // A row selects its plan; a candidate that is not among the best says why it was set aside.
    if (best->rowCount() > 1) {
      best->selectRow(1);
      QCOMPARE(split_label(dialog->model().candidates()[*dialog->selectedCandidate()].plan),
               split_label(dialog->model().result().best[1].plan));
    }
    bool set_aside = false;
    for (int c = 0; c < static_cast<int>(dialog->model().candidates().size()) && !set_aside; ++c)
      if (const PrunedPlan* pruned = dialog->model().prunedOf(c)) {
        dialog->selectCandidate(c);
        QVERIFY(dialog->detailsLabel()->text().contains(QStringLiteral("Set aside")));
        QVERIFY(best->selectedItems().isEmpty());
        QVERIFY(!pruned->why.empty());
        set_aside = true;
      }
    QVERIFY(set_aside);
    dialog->selectCandidate(dialog->model().candidateOfRank(1));

    // A filter leaves only its value.
    QComboBox* pp = dialog->filterCombo(SplitSearchModel::Pp);
    QVERIFY(pp->count() > 2);
    pp->setCurrentIndex(pp->findData(QStringLiteral("2")));
    for (const auto& point : dialog->model().points())
      QCOMPARE(dialog->model().candidates()[point.candidate].plan.pp, 2);

    QSignalSpy applied(window.planController(), &PlanController::planApplied);
    dialog->loadButton()->click();
    QCOMPARE(applied.count(), 1);
    QCOMPARE(window.document()->experiment().parallel.tp, chosen.plan.tp);
    QCOMPARE(window.document()->experiment().parallel.microbatches, chosen.plan.microbatches);
    QCOMPARE(window.document()->experiment().parallel.devices(), 8);
    QVERIFY(window.planController()->canUndo());
    window.planController()->undo();
    QCOMPARE(experiment_to_json(window.document()->experiment()), experiment_to_json(before));
  }

  void exportsTheChosenSplitAsALaunchCommand() {
    SplitSearchDialog dialog(gpt2_small());
    dialog.devicesSpin()->setValue(8);
    QVERIFY(!dialog.exportButton()->isEnabled());
    QVERIFY(dialog.launchText(LaunchTool::Megatron).isEmpty());
    QSignalSpy finished(&dialog, &SplitSearchDialog::searchFinished);
    dialog.search();
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 30000);
    QVERIFY(dialog.exportButton()->isEnabled());
    const ParallelPlan& chosen = dialog.model().candidates()[*dialog.selectedCandidate()].plan;
    bool exported = false;
    const QString megatron = dialog.launchText(LaunchTool::Megatron, &exported);
    QVERIFY(exported);
    QVERIFY(megatron.contains(QStringLiteral("--tensor-model-parallel-size %1").arg(chosen.tp)));
    QVERIFY(megatron.contains(QStringLiteral("--pipeline-model-parallel-size %1").arg(chosen.pp)));
    QVERIFY(dialog.launchText(LaunchTool::Torchtitan).contains(QStringLiteral("[parallelism]")));
    dialog.exportLaunch(LaunchTool::Megatron);
    QCOMPARE(QApplication::clipboard()->text(), megatron);

    // A model that is not a GPT has no launch command: the view says why.
    Experiment mlp = default_experiment();
    mlp.simulation.profile = "h100";
    SplitSearchDialog mlp_dialog(mlp);
    mlp_dialog.devicesSpin()->setValue(2);
    QSignalSpy mlp_finished(&mlp_dialog, &SplitSearchDialog::searchFinished);
    mlp_dialog.search();
    QTRY_COMPARE_WITH_TIMEOUT(mlp_finished.count(), 1, 30000);
    QVERIFY(mlp_dialog.selectedCandidate().has_value());
    const QString refused = mlp_dialog.launchText(LaunchTool::Megatron, &exported);
    QVERIFY(!exported);
    QVERIFY2(refused.contains(QStringLiteral("cannot be exported")), qPrintable(refused));
  }

  void theSearchStopsWhenAskedOrWhenTheDialogCloses() {
    // LLaMA 2 70B on 1,024 GPUs takes half a minute to search: stopping takes no time.
    const Experiment llama =
        load_experiment(std::string(PIPELAB_SOURCE_DIR) + "/examples/llama_70b_predict.json");
    SplitSearchDialog dialog(llama);
    dialog.devicesSpin()->setValue(1024);
    QSignalSpy finished(&dialog, &SplitSearchDialog::searchFinished);
    dialog.searchButton()->click();
    QVERIFY(dialog.isSearching());
    QCOMPARE(dialog.searchButton()->text(), QStringLiteral("Stop"));
    QElapsedTimer timer;
    timer.start();
    dialog.searchButton()->click();
    QTRY_COMPARE(finished.count(), 1);
    QVERIFY2(timer.elapsed() < 10000, qPrintable(QString::number(timer.elapsed())));
    QVERIFY(dialog.statusLabel()->text().contains(QStringLiteral("stopped")));
    QCOMPARE(dialog.searchButton()->text(), QStringLiteral("Search"));

    timer.restart();
    {
      SplitSearchDialog closing(llama);
      closing.devicesSpin()->setValue(1024);
      closing.search();
      QVERIFY(closing.isSearching());
    }  // destroyed while searching
    QVERIFY2(timer.elapsed() < 10000, qPrintable(QString::number(timer.elapsed())));
  }

  void aBadMemoryOrAnUnsearchableExperimentSaysWhy() {
    SplitSearchDialog dialog(gpt2_small());
    dialog.memoryEdit()->setText(QStringLiteral("lots"));
    dialog.search();
    QVERIFY(!dialog.isSearching());
    QVERIFY(dialog.statusLabel()->text().contains(QStringLiteral("80GB")));

    Experiment unit = gpt2_small();
    unit.simulation.profile = "unit";
    SplitSearchDialog unit_dialog(unit);
    QSignalSpy finished(&unit_dialog, &SplitSearchDialog::searchFinished);
    unit_dialog.search();
    QTRY_COMPARE(finished.count(), 1);
    QCOMPARE(finished.front().front().toBool(), false);
    QVERIFY(unit_dialog.statusLabel()->text().contains(QStringLiteral("unit")));
    QVERIFY(!unit_dialog.loadButton()->isEnabled());
  }
};

QTEST_MAIN(SplitSearchViewTest)
#include "split_search_view_test.moc"
