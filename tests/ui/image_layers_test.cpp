// Convolutional networks in the app: the ResNet template fills the layer
// table with images, and the table edits channels and windows and refuses
// nonsense.
#include <QComboBox>
#include <QSignalSpy>
#include <QtTest>

#include "ui/models/experiment_document.h"
#include "ui/models/layer_table_model.h"
#include "ui/panels/model_panel.h"
#include "ui_test_support.h"

using namespace pipelab;

class ImageLayersTest : public QObject {
  Q_OBJECT

 private slots:
  void resnetTemplateShowsImagesChannelsAndWindows() {
    ExperimentDocument document;
    ModelPanel panel(&document);
    const int resnet = panel.templateCombo()->findData(QStringLiteral("resnet-mnist"));
    QVERIFY(resnet > 0);
    panel.applyTemplate(resnet);
    LayerTableModel* table = panel.layerModel();
    QCOMPARE(table->rowCount(), 8);
    QCOMPARE(table->index(0, LayerTableModel::TypeColumn).data().toString(), QString("conv2d"));
    QCOMPARE(table->index(0, LayerTableModel::SizeColumn).data().toString(), QString("16 ch, 3×3 /1"));
    QCOMPARE(table->index(0, LayerTableModel::ShapeColumn).data().toString(), QString("1×28×28 → 16×28×28"));
    QCOMPARE(table->index(4, LayerTableModel::ShapeColumn).data().toString(), QString("16×28×28 → 32×14×14"));
    QCOMPARE(table->index(6, LayerTableModel::ShapeColumn).data().toString(), QString("64×7×7 → 64"));
    QCOMPARE(table->index(1, LayerTableModel::SizeColumn).data().toString(), QString("local"));
  }

  void channelsAndWindowsEditAndNonsenseIsRefused() {
    ExperimentDocument document;
    ModelPanel panel(&document);
    panel.applyTemplate(panel.templateCombo()->findData(QStringLiteral("resnet-mnist")));
    LayerTableModel* table = panel.layerModel();
    QVERIFY(table->flags(table->index(0, LayerTableModel::SizeColumn)) & Qt::ItemIsEditable);
    QVERIFY(table->setData(table->index(0, LayerTableModel::SizeColumn), 8));
    QCOMPARE(document.experiment().model.layers[0].out, 8);
    QSignalSpy rejected(table, &LayerTableModel::editRejected);
    QVERIFY(!table->setData(table->index(4, LayerTableModel::SizeColumn), QStringLiteral("wide")));
    QCOMPARE(rejected.count(), 1);
    QVERIFY(rejected.first().first().toString().contains("output channels"));
    // A conv layer changed into a pool takes a 2 x 2 window.
    QVERIFY(table->setData(table->index(0, LayerTableModel::TypeColumn), QStringLiteral("maxpool")));
    QCOMPARE(table->index(0, LayerTableModel::SizeColumn).data().toString(), QString("2×2 /2"));
  }
};

QTEST_MAIN(ImageLayersTest)
#include "image_layers_test.moc"
