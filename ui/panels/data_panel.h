// DataPanel: where training data comes from (a synthetic set generated from
// the seed, or MNIST-style IDX files or a CSV file) and how training runs:
// batch size, optimizer, learning rate, steps, evaluation and seed, and (schedule
// pipemare) PipeMare's two techniques.
#pragma once

#include <QWidget>

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QLineEdit;
class QPushButton;
class QSpinBox;

namespace pipelab {

class ExperimentDocument;
class ProblemLabel;

class DataPanel : public QWidget {
  Q_OBJECT

 public:
  explicit DataPanel(ExperimentDocument* document, QWidget* parent = nullptr);

  void setProblems(const QStringList& problems);
  QComboBox* sourceCombo() const { return source_combo_; }
  QCheckBox* discrepancyCorrectionCheck() const { return discrepancy_correction_check_; }
  QCheckBox* fp32GradientsCheck() const { return fp32_gradients_check_; }

 private:
  void refreshFromDocument();
  void chooseSource(const QString& source);
  void browseForData();
  // Where a data path as typed points: relative to the experiment's file.
  QString resolveDataPath(const QString& path) const;

  ExperimentDocument* document_;
  QComboBox* source_combo_;
  QLineEdit* path_edit_;
  QPushButton* browse_button_;
  QSpinBox* samples_spin_;
  QSpinBox* classes_spin_;
  QSpinBox* features_spin_;
  QSpinBox* vocab_spin_;  // sequence tasks: token ids
  QComboBox* precision_combo_;
  QCheckBox* fp32_gradients_check_;  // training.fp32_gradients, under bf16-mixed
  QDoubleSpinBox* noise_spin_;
  QSpinBox* limit_spin_;
  QDoubleSpinBox* validation_spin_;
  QSpinBox* batch_spin_;
  QComboBox* optimizer_combo_;
  QDoubleSpinBox* lr_spin_;
  QDoubleSpinBox* momentum_spin_;
  QDoubleSpinBox* weight_decay_spin_;
  QSpinBox* steps_spin_;
  QSpinBox* eval_spin_;
  QSpinBox* seed_spin_;
  // training.pipemare, editable under schedule pipemare only.
  QCheckBox* lr_rescheduling_check_;
  QSpinBox* lr_warmup_spin_;
  QCheckBox* discrepancy_correction_check_;
  QDoubleSpinBox* velocity_decay_spin_;
  QLabel* shape_label_;
  ProblemLabel* problem_label_;
};

}  // namespace pipelab
