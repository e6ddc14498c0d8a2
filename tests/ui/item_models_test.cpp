// The app's item models under QAbstractItemModelTester, which checks Qt's model
// contract (row and column counts, indexes, parents, data for every role, and
// the signals around inserts, removals, moves and resets) after each change a
// user can make. A broken contract shows up in views as stale or missing rows.
#include <QAbstractItemModelTester>
#include <QtTest>

#include "core/io/experiment_io.h"
#include "ui/models/experiment_document.h"
#include "ui/models/layer_table_model.h"
#include "ui/models/run_store.h"
#include "ui_test_support.h"

using namespace pipelab;

class ItemModelsTest : public QObject {
  Q_OBJECT

 private slots:
  void layerTableKeepsTheContractThroughEveryEdit() {
    ExperimentDocument document;
    LayerTableModel model(&document);
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    const int before = model.rowCount();
    QVERIFY(before >= 3);

    model.insertLayer(1, LayerSpec{LayerType::Tanh, 0, true, 0.0});
    QCOMPARE(model.rowCount(), before + 1);
    QVERIFY(model.moveLayer(1, before));
    QCOMPARE(model.index(before, LayerTableModel::TypeColumn).data().toString(), QString("tanh"));
    QVERIFY(model.setData(model.index(0, LayerTableModel::SizeColumn), 48));
    QCOMPARE(document.experiment().model.layers[0].out, int64_t{48});
    QVERIFY(!model.setData(model.index(0, LayerTableModel::SizeColumn), 0));  // rejected
    QVERIFY(model.removeLayer(before));
    QCOMPARE(model.rowCount(), before);

    // A whole new experiment (a file opened, a preset applied) resets the table.
    Experiment other = document.experiment();
    other.model.layers.insert(other.model.layers.begin() + 1, LayerSpec{LayerType::Tanh, 0, true, 0.0});
    document.replace(other, QString(), false);
    QCOMPARE(model.rowCount(), int(other.model.layers.size()));
  }

  void runStoreKeepsTheContractAsRunsArrive() {
    RunStore store;
    QAbstractItemModelTester tester(&store, QAbstractItemModelTester::FailureReportingMode::QtTest);
    QCOMPARE(store.rowCount(), 0);
    Trace trace;
    trace.source = "measured";
    trace.schedule = "1f1b";
    QCOMPARE(store.add(default_experiment(), trace), 0);
    QCOMPARE(store.add(default_experiment(), trace), 1);
    QCOMPARE(store.rowCount(), 2);
    QVERIFY(!store.index(1).data().toString().isEmpty());
    QVERIFY(store.index(1).data().toString() != store.index(0).data().toString());
  }
};

QTEST_MAIN(ItemModelsTest)
#include "item_models_test.moc"
