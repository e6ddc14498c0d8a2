// Editing the layer stack through the table model and the model panel.
#include <QPushButton>
#include <QSignalSpy>
#include <QTableView>
#include <QtTest>

#include "core/plan/partition.h"
#include "ui/models/experiment_document.h"
#include "ui/models/layer_table_model.h"
#include "ui/panels/model_panel.h"
#include "ui/timeline/op_colors.h"
#include "ui_test_support.h"

using namespace pipelab;

class LayerTableModelTest : public QObject {
  Q_OBJECT

 private slots:
  void rowsFollowTheLayerStack() {
    ExperimentDocument document;
    LayerTableModel model(&document);
    QCOMPARE(model.rowCount(), int(document.experiment().model.layers.size()));
    QCOMPARE(model.columnCount(), int(LayerTableModel::ColumnCount));
    QCOMPARE(model.index(0, LayerTableModel::TypeColumn).data().toString(), QString("linear"));
  }

  void addingALayerInsertsItAndMarksTheDocumentDirty() {
    ExperimentDocument document;
    LayerTableModel model(&document);
    const int before = model.rowCount();
    QVERIFY(!document.isDirty());
    model.insertLayer(1, LayerSpec{LayerType::Tanh, 0, true, 0.0});
    QCOMPARE(model.rowCount(), before + 1);
    QCOMPARE(document.experiment().model.layers[1].type, LayerType::Tanh);
    QCOMPARE(model.index(1, LayerTableModel::TypeColumn).data().toString(), QString("tanh"));
    QVERIFY(document.isDirty());
  }

  void removingALayerDropsThatRow() {
    ExperimentDocument document;
    LayerTableModel model(&document);
    const auto layers = document.experiment().model.layers;
    QVERIFY(model.removeLayer(1));
    QCOMPARE(model.rowCount(), int(layers.size()) - 1);
    QCOMPARE(document.experiment().model.layers[1].type, layers[2].type);
    QCOMPARE(document.experiment().model.layers[1].out, layers[2].out);
    QVERIFY(!model.removeLayer(99));
  }

  void reorderingMovesTheLayer() {
    ExperimentDocument document;
    LayerTableModel model(&document);
    const auto layers = document.experiment().model.layers;
    QVERIFY(layers[0].type != layers[1].type);
    QVERIFY(model.moveLayer(0, 1));
    QCOMPARE(document.experiment().model.layers[0].type, layers[1].type);
    QCOMPARE(document.experiment().model.layers[1].type, layers[0].type);
    QVERIFY(!model.moveLayer(0, int(layers.size())));  // past the end
  }

  void invalidWidthIsRejected() {
    ExperimentDocument document;
    LayerTableModel model(&document);
    QSignalSpy rejected(&model, &LayerTableModel::editRejected);
    const QModelIndex width = model.index(0, LayerTableModel::SizeColumn);
    const int64_t before = document.experiment().model.layers[0].out;
    QVERIFY(!model.setData(width, 0));
    QVERIFY(!model.setData(width, -5));
    QVERIFY(!model.setData(width, QStringLiteral("wide")));
    QCOMPARE(rejected.count(), 3);
    QVERIFY(rejected.first().first().toString().contains("at least 1"));
    QCOMPARE(document.experiment().model.layers[0].out, before);
    QVERIFY(!document.isDirty());
  }

  void validWidthChangesTheParameterCount() {
    ExperimentDocument document;
    LayerTableModel model(&document);
    QVERIFY(model.setData(model.index(0, LayerTableModel::SizeColumn), 128));
    QCOMPARE(document.experiment().model.layers[0].out, int64_t(128));
    const std::vector<LayerInfo> infos = describe_layers(document.experiment().model);
    // The first linear maps the input to 128 features: in * 128 weights + 128 biases.
    QCOMPARE(infos[0].params, infos[0].in_features * 128 + 128);
    QCOMPARE(model.index(0, LayerTableModel::ShapeColumn).data().toString(),
             QString("%1 → 128").arg(infos[0].in_features));
  }

  void typeEditsAcceptKnownTypesOnly() {
    ExperimentDocument document;
    LayerTableModel model(&document);
    const QModelIndex type = model.index(1, LayerTableModel::TypeColumn);
    QVERIFY(model.setData(type, QStringLiteral("gelu")));
    QCOMPARE(document.experiment().model.layers[1].type, LayerType::Gelu);
    QVERIFY(!model.setData(type, QStringLiteral("convolution")));
    QCOMPARE(document.experiment().model.layers[1].type, LayerType::Gelu);
  }

  void rowsAreColouredByTheirStage() {
    ExperimentDocument document;
    document.edit([](Experiment& e) { e.parallel.pp = 2; });
    LayerTableModel model(&document);
    const auto ranges =
        partition_layers(document.experiment().model, document.experiment().parallel);
    QCOMPARE(int(ranges.size()), 2);
    for (int stage = 0; stage < 2; ++stage) {
      for (int row = ranges[stage].begin; row < ranges[stage].end; ++row) {
        QCOMPARE(model.stageOfLayer(row), stage);
        QCOMPARE(model.index(row, 0).data(Qt::BackgroundRole).value<QBrush>().color(),
                 stage_color(stage));
        QCOMPARE(model.index(row, LayerTableModel::StageColumn).data().toString(),
                 QString::number(stage));
      }
    }
    QVERIFY(stage_color(0) != stage_color(1));
  }

  void impossibleSplitLeavesRowsWithoutAStage() {
    ExperimentDocument document;
    LayerTableModel model(&document);
    document.edit([](Experiment& e) { e.parallel.pp = 50; });
    QCOMPARE(model.stageOfLayer(0), -1);
    QVERIFY(model.problem().contains("50"));
  }

  void explicitBoundariesFollowInsertedLayers() {
    ExperimentDocument document;
    document.edit([](Experiment& e) {
      e.parallel.pp = 2;
      e.parallel.partition = PartitionRule::Explicit;
      e.parallel.boundaries = {4};
    });
    LayerTableModel model(&document);
    const int stage_of_layer_4 = model.stageOfLayer(4);
    model.insertLayer(1, LayerSpec{LayerType::Relu, 0, true, 0.0});
    QCOMPARE(document.experiment().parallel.boundaries, std::vector<int>{5});
    QCOMPARE(model.stageOfLayer(5), stage_of_layer_4);  // the old layer 4 kept its stage
  }

  void panelButtonsAddRemoveAndReorder() {
    ExperimentDocument document;
    ModelPanel panel(&document);
    panel.show();
    QPushButton* add_button = nullptr;
    QPushButton* remove_button = nullptr;
    QPushButton* down_button = nullptr;
    for (QPushButton* button : panel.findChildren<QPushButton*>()) {
      if (button->text() == "Add") add_button = button;
      if (button->text() == "Remove") remove_button = button;
      if (button->text() == "Move down") down_button = button;
    }
    QVERIFY(add_button && remove_button && down_button);
    const int rows = panel.layerModel()->rowCount();
    panel.layerView()->selectRow(0);
    QTest::mouseClick(add_button, Qt::LeftButton);
    QCOMPARE(panel.layerModel()->rowCount(), rows + 1);
    QCOMPARE(document.experiment().model.layers[1].type, LayerType::Linear);  // after row 0
    panel.layerView()->selectRow(1);
    QTest::mouseClick(remove_button, Qt::LeftButton);
    QCOMPARE(panel.layerModel()->rowCount(), rows);
    const LayerType first = document.experiment().model.layers[0].type;
    panel.layerView()->selectRow(0);
    QTest::mouseClick(down_button, Qt::LeftButton);
    QCOMPARE(document.experiment().model.layers[1].type, first);
  }
};

QTEST_MAIN(LayerTableModelTest)
#include "layer_table_model_test.moc"
