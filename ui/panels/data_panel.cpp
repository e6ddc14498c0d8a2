#include "ui/panels/data_panel.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDir>
#include <QDoubleSpinBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSignalBlocker>
#include <QSpinBox>
#include <QVBoxLayout>
#include <limits>
#include <utility>

#include "core/io/data_sources.h"
#include "ui/models/experiment_document.h"
#include "ui/panels/problem_label.h"

namespace pipelab {
namespace {

QSpinBox* make_spin(QWidget* parent, int minimum, int maximum) {
  auto* spin = new QSpinBox(parent);
  spin->setRange(minimum, maximum);
  spin->setKeyboardTracking(false);
  return spin;
}

QDoubleSpinBox* make_double_spin(QWidget* parent, double minimum, double maximum, int decimals,
                                 double step) {
  auto* spin = new QDoubleSpinBox(parent);
  spin->setRange(minimum, maximum);
  spin->setDecimals(decimals);
  spin->setSingleStep(step);
  spin->setKeyboardTracking(false);
  return spin;
}

// Changing the data set changes the model's ends: its input width and, for
// classification, the last linear layer's width.
void fit_model_to_data(Experiment& e) {
  const DataShape shape = data_source_shape(e.data);
  if (shape.features > 0) e.model.input = {shape.features};
  if (shape.classes > 0) {
    for (auto layer = e.model.layers.rbegin(); layer != e.model.layers.rend(); ++layer) {
      if (layer->type == LayerType::Linear) {
        layer->out = shape.classes;
        break;
      }
    }
  }
}

}  // namespace

DataPanel::DataPanel(ExperimentDocument* document, QWidget* parent)
    : QWidget(parent), document_(document) {
  source_combo_ = new QComboBox(this);
  // Synthetic sets first (they need nothing on disk), then the file formats.
  for (const std::string& name : data_source_names())
    if (!is_file_data_source(name)) source_combo_->addItem(QString::fromStdString(name));
  source_combo_->insertSeparator(source_combo_->count());
  for (const std::string& name : data_source_names())
    if (is_file_data_source(name)) source_combo_->addItem(QString::fromStdString(name));

  path_edit_ = new QLineEdit(this);
  path_edit_->setPlaceholderText(tr("folder with IDX files, or a CSV file"));
  browse_button_ = new QPushButton(tr("Browse…"), this);
  samples_spin_ = make_spin(this, 1, 10'000'000);
  classes_spin_ = make_spin(this, 0, 1000);
  features_spin_ = make_spin(this, 1, 100'000);
  noise_spin_ = make_double_spin(this, 0, 10, 3, 0.05);
  limit_spin_ = make_spin(this, 0, std::numeric_limits<int>::max());
  limit_spin_->setSpecialValueText(tr("all"));
  validation_spin_ = make_double_spin(this, 0, 0.95, 2, 0.05);
  vocab_spin_ = make_spin(this, 1, 65536);
  vocab_spin_->setToolTip(tr("Sequence tasks (copy, reverse, sort, add): how many token ids, "
                             "special tokens included; the model's output layer follows it"));
  shape_label_ = new QLabel(this);
  shape_label_->setStyleSheet(QStringLiteral("QLabel { color: #555; }"));

  batch_spin_ = make_spin(this, 1, 1 << 20);
  batch_spin_->setToolTip(
      tr("Global batch per step: split over the dp replicas, then into "
         "micro-batches"));
  optimizer_combo_ = new QComboBox(this);
  optimizer_combo_->addItems(
      {QStringLiteral("sgd"), QStringLiteral("adam"), QStringLiteral("adamw")});
  precision_combo_ = new QComboBox(this);
  for (Precision precision : {Precision::Fp32, Precision::Bf16Mixed})
    precision_combo_->addItem(QString::fromLatin1(precision_name(precision)), static_cast<int>(precision));
  precision_combo_->setToolTip(
      tr("bf16-mixed: bf16 weights, gradients and activations with fp32 master weights and optimizer "
         "state (16 bytes per parameter under Adam), as the simulator predicts it. The cuda backend "
         "trains it (bf16 GEMMs; fp32 master weights, gradients and optimizer); the cpu backend "
         "trains fp32 only."));
  fp32_gradients_check_ = new QCheckBox(tr("fp32 gradients"), this);
  fp32_gradients_check_->setToolTip(
      tr("Gradients held and reduced across replicas in fp32 (4 bytes per parameter, 18 in all "
         "under Adam), as Megatron-LM does by default for bf16; off: in bf16, the ZeRO paper's 16 "
         "bytes. The simulator predicts either; the cuda backend keeps fp32 gradients."));
  lr_spin_ = make_double_spin(this, 1e-6, 10, 6, 0.001);
  momentum_spin_ = make_double_spin(this, 0, 0.999, 3, 0.05);
  weight_decay_spin_ = make_double_spin(this, 0, 1, 5, 0.0001);
  steps_spin_ = make_spin(this, 1, 10'000'000);
  eval_spin_ = make_spin(this, 0, 10'000'000);
  eval_spin_->setSpecialValueText(tr("at the end"));
  seed_spin_ = make_spin(this, 0, std::numeric_limits<int>::max());
  seed_spin_->setToolTip(
      tr("The same seed gives the same data and initial weights, whatever "
         "the split"));
  lr_rescheduling_check_ = new QCheckBox(tr("Learning-rate rescheduling"), this);
  lr_rescheduling_check_->setToolTip(
      tr("Each stage's step size is lr / delay^(1 - k/K): divided by its delay at first, lr again "
         "after K updates"));
  lr_warmup_spin_ = make_spin(this, 1, 10'000'000);
  lr_warmup_spin_->setToolTip(tr("K: updates until the step size is the learning rate again"));
  discrepancy_correction_check_ = new QCheckBox(tr("Discrepancy correction"), this);
  discrepancy_correction_check_->setToolTip(
      tr("A backward reads w - delay x velocity, an estimate of the weights its forward read"));
  velocity_decay_spin_ = make_double_spin(this, 0, 0.999, 3, 0.05);
  velocity_decay_spin_->setToolTip(tr("gamma of the velocity's running average of weight changes"));
  problem_label_ = new ProblemLabel(this);

  auto* data_box = new QGroupBox(tr("Data set"), this);
  auto* data_form = new QFormLayout(data_box);
  data_form->addRow(tr("Source:"), source_combo_);
  auto* path_row = new QHBoxLayout;
  path_row->addWidget(path_edit_, 1);
  path_row->addWidget(browse_button_);
  data_form->addRow(tr("Files:"), path_row);
  data_form->addRow(tr("Samples:"), samples_spin_);
  data_form->addRow(tr("Classes:"), classes_spin_);
  data_form->addRow(tr("Features:"), features_spin_);
  data_form->addRow(tr("Vocabulary:"), vocab_spin_);
  data_form->addRow(tr("Noise:"), noise_spin_);
  data_form->addRow(tr("Use at most:"), limit_spin_);
  data_form->addRow(tr("Validation share:"), validation_spin_);
  data_form->addRow(shape_label_);

  auto* training_box = new QGroupBox(tr("Training"), this);
  auto* training_form = new QFormLayout(training_box);
  training_form->addRow(tr("Batch size:"), batch_spin_);
  training_form->addRow(tr("Optimizer:"), optimizer_combo_);
  training_form->addRow(tr("Precision:"), precision_combo_);
  training_form->addRow(QString(), fp32_gradients_check_);
  training_form->addRow(tr("Learning rate:"), lr_spin_);
  training_form->addRow(tr("Momentum:"), momentum_spin_);
  training_form->addRow(tr("Weight decay:"), weight_decay_spin_);
  training_form->addRow(tr("Steps:"), steps_spin_);
  training_form->addRow(tr("Validate every:"), eval_spin_);
  training_form->addRow(tr("Seed:"), seed_spin_);
  training_form->addRow(tr("PipeMare:"), lr_rescheduling_check_);
  training_form->addRow(tr("Warm-up updates:"), lr_warmup_spin_);
  training_form->addRow(QString(), discrepancy_correction_check_);
  training_form->addRow(tr("Velocity decay:"), velocity_decay_spin_);

  auto* layout = new QVBoxLayout(this);
  layout->addWidget(data_box);
  layout->addWidget(training_box);
  layout->addWidget(problem_label_);
  layout->addStretch();

  connect(source_combo_, &QComboBox::activated, this,
          [this] { chooseSource(source_combo_->currentText()); });
  connect(browse_button_, &QPushButton::clicked, this, &DataPanel::browseForData);
  connect(path_edit_, &QLineEdit::editingFinished, this, [this] {
    const QString path = path_edit_->text().trimmed();
    document_->edit([&](Experiment& e) {
      e.data.path = path.toStdString();
      e.data.resolved_path = resolveDataPath(path).toStdString();
    });
  });
  auto edit_int = [this](QSpinBox* spin, auto setter) {
    connect(spin, &QSpinBox::valueChanged, this, [this, setter](int value) {
      document_->edit([&](Experiment& e) { setter(e, value); });
    });
  };
  auto edit_double = [this](QDoubleSpinBox* spin, auto setter) {
    connect(spin, &QDoubleSpinBox::valueChanged, this, [this, setter](double value) {
      document_->edit([&](Experiment& e) { setter(e, value); });
    });
  };
  edit_int(samples_spin_, [](Experiment& e, int v) { e.data.samples = v; });
  edit_int(classes_spin_, [](Experiment& e, int v) {
    e.data.classes = v;
    fit_model_to_data(e);
  });
  edit_int(features_spin_, [](Experiment& e, int v) {
    e.data.features = v;
    fit_model_to_data(e);
  });
  edit_int(vocab_spin_, [](Experiment& e, int v) {
    e.data.vocab = v;
    fit_model_to_data(e);
  });
  connect(precision_combo_, &QComboBox::activated, this, [this] {
    const auto precision = static_cast<Precision>(precision_combo_->currentData().toInt());
    document_->edit([precision](Experiment& e) { e.training.precision = precision; });
  });
  edit_double(noise_spin_, [](Experiment& e, double v) { e.data.noise = v; });
  edit_int(limit_spin_, [](Experiment& e, int v) { e.data.limit = v; });
  edit_double(validation_spin_, [](Experiment& e, double v) { e.data.validation_fraction = v; });
  edit_int(batch_spin_, [](Experiment& e, int v) { e.training.batch_size = v; });
  edit_double(lr_spin_, [](Experiment& e, double v) { e.training.optimizer.lr = v; });
  edit_double(momentum_spin_, [](Experiment& e, double v) { e.training.optimizer.momentum = v; });
  edit_double(weight_decay_spin_,
              [](Experiment& e, double v) { e.training.optimizer.weight_decay = v; });
  edit_int(steps_spin_, [](Experiment& e, int v) { e.training.steps = v; });
  edit_int(eval_spin_, [](Experiment& e, int v) { e.training.eval_every = v; });
  edit_int(seed_spin_, [](Experiment& e, int v) { e.seed = static_cast<uint64_t>(v); });
  edit_int(lr_warmup_spin_, [](Experiment& e, int v) { e.training.pipemare.lr_warmup_updates = v; });
  edit_double(velocity_decay_spin_, [](Experiment& e, double v) { e.training.pipemare.velocity_decay = v; });
  connect(lr_rescheduling_check_, &QCheckBox::toggled, this, [this](bool on) {
    document_->edit([on](Experiment& e) { e.training.pipemare.lr_rescheduling = on; });
  });
  connect(discrepancy_correction_check_, &QCheckBox::toggled, this, [this](bool on) {
    document_->edit([on](Experiment& e) { e.training.pipemare.discrepancy_correction = on; });
  });
  connect(fp32_gradients_check_, &QCheckBox::toggled, this, [this](bool on) {
    document_->edit([on](Experiment& e) { e.training.fp32_gradients = on; });
  });
  connect(optimizer_combo_, &QComboBox::activated, this, [this] {
    const std::string type = optimizer_combo_->currentText().toStdString();
    document_->edit([&](Experiment& e) { e.training.optimizer.type = type; });
  });
  connect(document_, &ExperimentDocument::changed, this, &DataPanel::refreshFromDocument);
  refreshFromDocument();
}

void DataPanel::chooseSource(const QString& source) {
  document_->edit([&](Experiment& e) {
    e.data.source = source.toStdString();
    fit_model_to_data(e);
  });
  if (is_file_data_source(source.toStdString()) && document_->experiment().data.path.empty())
    browseForData();
}

void DataPanel::browseForData() {
  const std::string source = document_->experiment().data.source;
  QString chosen;
  if (source == "csv") {
    chosen = QFileDialog::getOpenFileName(this, tr("Choose a CSV file"), QString(),
                                          tr("CSV files (*.csv);;All files (*)"));
  } else if (source == "text") {
    chosen = QFileDialog::getOpenFileName(this, tr("Choose a UTF-8 text file to learn from"), QString(),
                                          tr("Text files (*.txt *.md LICENSE*);;All files (*)"));
  } else {
    chosen = QFileDialog::getExistingDirectory(
        this, tr("Choose the folder that holds the IDX files (train-*, t10k-*)"));
  }
  if (chosen.isEmpty()) return;
  document_->edit([&](Experiment& e) {
    e.data.path = chosen.toStdString();
    e.data.resolved_path = resolveDataPath(chosen).toStdString();
  });
}

QString DataPanel::resolveDataPath(const QString& path) const {
  if (path.isEmpty() || QFileInfo(path).isAbsolute()) return path;
  // Relative paths are relative to the experiment file, as when it loads.
  const QString file = document_->filePath();
  const QDir base = file.isEmpty() ? QDir::current() : QFileInfo(file).absoluteDir();
  return QDir::cleanPath(base.absoluteFilePath(path));
}

void DataPanel::refreshFromDocument() {
  const Experiment& experiment = document_->experiment();
  const DataSpec& data = experiment.data;
  const bool from_files = is_file_data_source(data.source);
  {
    const QSignalBlocker blocker(source_combo_);
    source_combo_->setCurrentText(QString::fromStdString(data.source));
  }
  if (!path_edit_->hasFocus()) path_edit_->setText(QString::fromStdString(data.path));
  path_edit_->setEnabled(from_files);
  browse_button_->setEnabled(from_files);
  auto set_spin = [](QSpinBox* spin, int64_t value) {
    const QSignalBlocker blocker(spin);
    spin->setValue(static_cast<int>(std::min<int64_t>(value, spin->maximum())));
  };
  auto set_double = [](QDoubleSpinBox* spin, double value) {
    const QSignalBlocker blocker(spin);
    spin->setValue(value);
  };
  set_spin(samples_spin_, data.samples);
  set_spin(classes_spin_, data.classes);
  set_spin(features_spin_, data.features);
  set_spin(vocab_spin_, data.vocab);
  {
    const QSignalBlocker blocker(precision_combo_);
    precision_combo_->setCurrentIndex(precision_combo_->findData(static_cast<int>(experiment.training.precision)));
  }
  set_double(noise_spin_, data.noise);
  set_spin(limit_spin_, data.limit);
  set_double(validation_spin_, data.validation_fraction);
  set_spin(batch_spin_, experiment.training.batch_size);
  set_double(lr_spin_, experiment.training.optimizer.lr);
  set_double(momentum_spin_, experiment.training.optimizer.momentum);
  set_double(weight_decay_spin_, experiment.training.optimizer.weight_decay);
  set_spin(steps_spin_, experiment.training.steps);
  set_spin(eval_spin_, experiment.training.eval_every);
  set_spin(seed_spin_, static_cast<int64_t>(experiment.seed));
  const PipeMareSpec& pipemare = experiment.training.pipemare;
  set_spin(lr_warmup_spin_, pipemare.lr_warmup_updates);
  set_double(velocity_decay_spin_, pipemare.velocity_decay);
  for (auto [check, on] :
       {std::pair{lr_rescheduling_check_, pipemare.lr_rescheduling},
        std::pair{discrepancy_correction_check_, pipemare.discrepancy_correction},
        std::pair{fp32_gradients_check_, experiment.training.fp32_gradients}}) {
    const QSignalBlocker blocker(check);
    check->setChecked(on);
  }
  // fp32 gradients change nothing under fp32, where every gradient is fp32.
  fp32_gradients_check_->setEnabled(experiment.training.precision == Precision::Bf16Mixed);
  const bool pipemare_schedule = backward_reads_newest_weights(experiment.parallel.schedule);
  lr_rescheduling_check_->setEnabled(pipemare_schedule);
  lr_warmup_spin_->setEnabled(pipemare_schedule && pipemare.lr_rescheduling);
  discrepancy_correction_check_->setEnabled(pipemare_schedule);
  velocity_decay_spin_->setEnabled(pipemare_schedule && pipemare.discrepancy_correction);
  {
    const QSignalBlocker blocker(optimizer_combo_);
    optimizer_combo_->setCurrentText(QString::fromStdString(experiment.training.optimizer.type));
  }
  // Only the fields the chosen source reads are editable.
  const bool synthetic = !from_files;
  const bool sized = data.source == "blobs" || data.source == "teacher";
  samples_spin_->setEnabled(synthetic);
  noise_spin_->setEnabled(synthetic);
  classes_spin_->setEnabled(synthetic && (sized || data.source == "spiral"));
  features_spin_->setEnabled(synthetic && sized);
  const bool sequence = is_sequence_data_source(data.source);
  vocab_spin_->setEnabled(sequence && !from_files);
  classes_spin_->setEnabled(classes_spin_->isEnabled() && !sequence);
  noise_spin_->setEnabled(synthetic && !sequence);
  limit_spin_->setEnabled(from_files);
  momentum_spin_->setEnabled(experiment.training.optimizer.type == "sgd");

  const DataShape shape = data_source_shape(data);
  if (sequence) {
    shape_label_->setText(from_files ? tr("characters of the file → its character vocabulary")
                                     : tr("token sequences, vocabulary of %1").arg(data.vocab));
  } else if (shape.features > 0 && shape.classes > 0) {
    shape_label_->setText(tr("%1 features → %2 classes").arg(shape.features).arg(shape.classes));
  } else if (shape.features > 0) {
    shape_label_->setText(tr("%1 features").arg(shape.features));
  } else {
    shape_label_->setText(tr("shape read from the files when the run starts"));
  }
}

void DataPanel::setProblems(const QStringList& problems) { problem_label_->setProblems(problems); }

}  // namespace pipelab
