// Transformers in the app: the model panel's templates, the layer table's
// block and embedding rows, the Transformer settings and the two presets.
#include <QCheckBox>
#include <QComboBox>
#include <QSignalSpy>
#include <QtTest>

#include "core/io/experiment_io.h"
#include "core/sim/experiment_prediction.h"
#include "ui/models/experiment_document.h"
#include "ui/models/layer_table_model.h"
#include "ui/models/model_templates.h"
#include "ui/models/presets.h"
#include "ui/panels/model_panel.h"
#include "ui/gpu_availability.h"
#include "ui/panels/parallel_panel.h"
#include "ui_test_support.h"

using namespace pipelab;

class TransformerTemplatesTest : public QObject {
  Q_OBJECT

 private slots:
  void everyTemplateIsAValidExperimentThatSimulates() {
    const std::vector<ModelTemplate> templates = model_templates();
    QCOMPARE(int(templates.size()), 8);
    for (const ModelTemplate& model_template : templates) {
      const Experiment experiment = load_model_template(model_template);
      QVERIFY2(validate_experiment(experiment).empty(), qPrintable(model_template.id));
      QCOMPARE(is_sequence_model(experiment.model), model_template.id != QStringLiteral("resnet-mnist"));
      const Prediction prediction = predict_experiment(experiment);
      QVERIFY(prediction.result.makespan > 0);
    }
  }

  void choosingATemplateFillsTheLayerTableAndKeepsTheBackend() {
    ExperimentDocument document;
    document.edit([](Experiment& e) { e.backend.type = "cpu"; });
    ModelPanel panel(&document);
    QComboBox* combo = panel.templateCombo();
    const int gpt3 = combo->findData(QStringLiteral("gpt3-175b"));
    QVERIFY(gpt3 > 0);
    panel.applyTemplate(gpt3);
    const Experiment& experiment = document.experiment();
    QCOMPARE(int(experiment.model.layers.size()), 1 + 96 + 2);
    QCOMPARE(experiment.backend.type, std::string("cpu"));
    QVERIFY(document.isDirty());
    LayerTableModel* table = panel.layerModel();
    QCOMPARE(table->rowCount(), 99);
    QCOMPARE(table->index(1, LayerTableModel::TypeColumn).data().toString(), QString("transformer_block"));
    QCOMPARE(table->index(1, LayerTableModel::SizeColumn).data().toString(), QString("96 heads"));
    QCOMPARE(table->index(1, LayerTableModel::ShapeColumn).data().toString(), QString("2048×12288 → 2048×12288"));
    QCOMPARE(table->index(0, LayerTableModel::ShapeColumn).data().toString(), QString("2048 ids → 2048×12288"));
    QCOMPARE(table->index(0, LayerTableModel::SizeColumn).data().toString(), QString("12288 (vocab 50304)"));
    QVERIFY(!table->index(1, LayerTableModel::ParamsColumn).data().toString().isEmpty());
  }

  void theTinyLlamaRowsSayTheirGroupsAndRotaryPositions() {
    ExperimentDocument document;
    ModelPanel panel(&document);
    panel.applyTemplate(panel.templateCombo()->findData(QStringLiteral("tiny-llama")));
    LayerTableModel* table = panel.layerModel();
    QCOMPARE(table->index(0, LayerTableModel::SizeColumn).data().toString(),
             QString("64 (vocab 16, rotary positions)"));
    QCOMPARE(table->index(1, LayerTableModel::SizeColumn).data().toString(),
             QString("4 heads (2 key/value)"));
    // LLaMA 3's rotary base shows where it is not the usual 10000.
    document.edit([](Experiment& e) { e.model.layers[0].rope_theta = 500000; });
    QCOMPARE(table->index(0, LayerTableModel::SizeColumn).data().toString(),
             QString("64 (vocab 16, rotary positions, base 500000)"));
  }

  void blockRowsEditHeadsAndRefuseNonsense() {
    ExperimentDocument document;
    ModelPanel panel(&document);
    panel.applyTemplate(panel.templateCombo()->findData(QStringLiteral("tiny-gpt")));
    LayerTableModel* table = panel.layerModel();
    QSignalSpy rejected(table, &LayerTableModel::editRejected);
    QVERIFY(table->setData(table->index(1, LayerTableModel::SizeColumn), 8));
    QCOMPARE(document.experiment().model.layers[1].heads, 8);
    QVERIFY(!table->setData(table->index(1, LayerTableModel::SizeColumn), 0));
    QCOMPARE(rejected.count(), 1);
    QVERIFY(table->setData(table->index(0, LayerTableModel::SizeColumn), 128));
    QCOMPARE(document.experiment().model.layers[0].dim, 128);
    // A layer turned into a block gets heads to start from.
    QVERIFY(table->setData(table->index(3, LayerTableModel::TypeColumn), QString("transformer_block")));
    QCOMPARE(document.experiment().model.layers[3].heads, 4);
  }

  void transformerSettingsAreOfferedWhereTheyMeanSomething() {
    ExperimentDocument document;  // the default: an MLP
    ParallelPanel panel(&document, GpuAvailability{});
    QCheckBox* sequence_parallel = nullptr;
    QCheckBox* selective = nullptr;
    for (QCheckBox* check : panel.findChildren<QCheckBox*>()) {
      if (check->text() == QStringLiteral("Sequence parallel")) sequence_parallel = check;
      if (check->text().contains(QStringLiteral("selective"))) selective = check;
    }
    QVERIFY(sequence_parallel && selective);
    QVERIFY(!sequence_parallel->isEnabled());
    QVERIFY(!selective->isEnabled());
    ModelPanel model_panel(&document);
    model_panel.applyTemplate(model_panel.templateCombo()->findData(QStringLiteral("gpt2-small")));
    QVERIFY(selective->isEnabled());
    QVERIFY(sequence_parallel->isEnabled());  // the template has tp 2
    sequence_parallel->click();
    QVERIFY(document.experiment().parallel.sequence_parallel);
    selective->click();
    QVERIFY(document.experiment().parallel.selective_recompute);
    QVERIFY(!document.experiment().parallel.recompute);
  }

  void sequenceParallelPresetShowsLessActivationMemory() {
    const std::vector<Preset> list = presets();
    const auto find = [&](const QString& id) {
      for (const Preset& preset : list)
        if (preset.id == id) return preset.experiment;
      return Experiment{};
    };
    QVERIFY(is_sequence_model(find(QStringLiteral("megatron-attention")).model));
    Experiment with = find(QStringLiteral("sequence-parallel"));
    QVERIFY(with.parallel.sequence_parallel);
    Experiment without = with;
    without.parallel.sequence_parallel = false;
    const auto activations = [](const Experiment& e) {
      return predict_experiment(e).result.per_device[0].peak_bytes[static_cast<size_t>(MemoryCategory::Activations)];
    };
    QVERIFY(activations(with) < activations(without));
  }
};

QTEST_MAIN(TransformerTemplatesTest)
#include "transformer_templates_test.moc"
