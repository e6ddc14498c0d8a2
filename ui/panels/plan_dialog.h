// PlanDialog: asks what "Plan for me" plans for: how many devices, how much
// memory each has, and which planner. A thin form over core/planner's
// PlanRequest; the planning itself is PlanController's.
#pragma once

#include <QDialog>
#include <optional>

#include "core/io/experiment.h"
#include "core/planner/plan_proposal.h"

class QComboBox;
class QLabel;
class QLineEdit;
class QPushButton;
class QSpinBox;

namespace pipelab {

class PlanDialog : public QDialog {
  Q_OBJECT

 public:
  // Starts from the experiment's device count and its profile's memory.
  explicit PlanDialog(const Experiment& experiment, QWidget* parent = nullptr);

  // What the form says, or empty (with the reason shown) while it is not a valid request.
  std::optional<PlanRequest> request() const;

  QSpinBox* devicesSpin() const { return devices_spin_; }
  QLineEdit* memoryEdit() const { return memory_edit_; }
  QComboBox* plannerCombo() const { return planner_combo_; }

 private:
  void refresh();

  int tp_ = 1;
  QSpinBox* devices_spin_;
  QLineEdit* memory_edit_;
  QComboBox* planner_combo_;
  QLabel* planner_description_;
  QLabel* problem_label_;
  QPushButton* ok_button_;
};

}  // namespace pipelab
