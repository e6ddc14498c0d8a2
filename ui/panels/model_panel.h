// ModelPanel: edits the model: input shape, the layer stack (add, remove,
// reorder, change type and width), the loss, and the stage boundaries, which
// either follow the partition rule or are set by hand.
#pragma once

#include <QWidget>

class QCheckBox;
class QComboBox;
class QLabel;
class QLineEdit;
class QPushButton;
class QTableView;

namespace pipelab {

class ExperimentDocument;
class LayerTableModel;
class ProblemLabel;

class ModelPanel : public QWidget {
  Q_OBJECT

 public:
  explicit ModelPanel(ExperimentDocument* document, QWidget* parent = nullptr);

  LayerTableModel* layerModel() const { return layer_model_; }
  QTableView* layerView() const { return layer_view_; }
  QComboBox* templateCombo() const { return template_combo_; }
  // Replaces the experiment with a template's (model_templates.h); the
  // backend stays. An edit: Undo-free, but the title marks it unsaved.
  void applyTemplate(int index);
  // Problems from validation that concern the model or the split.
  void setProblems(const QStringList& problems);

 private:
  void refreshFromDocument();
  void showProblems();
  void updateButtons();
  int selectedRow() const;
  void addLayer();
  void removeLayer();
  void moveSelected(int delta);
  void setManualBoundaries(bool manual);
  void applyBoundariesText();
  void applyInputText();

  ExperimentDocument* document_;
  LayerTableModel* layer_model_;
  QTableView* layer_view_;
  QLineEdit* input_edit_;
  QComboBox* loss_combo_;
  QComboBox* template_combo_;
  QPushButton* add_button_;
  QPushButton* remove_button_;
  QPushButton* up_button_;
  QPushButton* down_button_;
  QCheckBox* manual_split_check_;
  QLineEdit* boundaries_edit_;
  QLabel* summary_label_;
  ProblemLabel* problem_label_;
  QStringList validation_problems_;
  QString rejected_edit_;  // the last refused cell edit, until the next good edit
};

}  // namespace pipelab
