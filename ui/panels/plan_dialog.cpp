#include "ui/panels/plan_dialog.h"

#include <QComboBox>
#include <QCoreApplication>
#include <QDialogButtonBox>
#include <QFormLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSpinBox>
#include <QVBoxLayout>
#include <algorithm>

#include "core/io/hardware_catalogue.h"
#include "core/sim/cost_model.h"
#include "core/text/byte_size.h"

namespace pipelab {
namespace {

constexpr int kMaxDialogDevices = 1 << 16;

}  // namespace

PlanDialog::PlanDialog(const Experiment& experiment, QWidget* parent)
    : QDialog(parent), tp_(std::max(experiment.parallel.tp, 1)) {
  setWindowTitle(tr("Plan for me"));
  setMinimumWidth(440);
  devices_spin_ = new QSpinBox(this);
  devices_spin_->setRange(1, kMaxDialogDevices);
  devices_spin_->setValue(std::max(experiment.parallel.devices(), 1));
  devices_spin_->setToolTip(
      tr("Devices in all; each stage replica takes parallel.tp = %1 of them").arg(tp_));

  memory_edit_ = new QLineEdit(this);
  const std::optional<DeviceProfile> profile = find_device_profile(experiment.simulation.profile);
  memory_edit_->setText(
      QString::fromStdString(byte_size_text(profile ? profile->memory_bytes : int64_t{16} << 30)));
  memory_edit_->setToolTip(tr("e.g. 16GiB, 80GB or a number of bytes"));

  planner_combo_ = new QComboBox(this);
  for (const PlannerKind kind : {PlannerKind::Dapple, PlannerKind::PipeDream})
    planner_combo_->addItem(kind == PlannerKind::Dapple ? tr("DAPPLE") : tr("PipeDream"),
                            static_cast<int>(kind));
  planner_description_ = new QLabel(this);
  planner_description_->setWordWrap(true);
  problem_label_ = new QLabel(this);
  problem_label_->setWordWrap(true);
  problem_label_->setStyleSheet(QStringLiteral("color: #b00020"));

  auto* form = new QFormLayout;
  form->addRow(tr("Devices"), devices_spin_);
  form->addRow(tr("Memory per device"), memory_edit_);
  form->addRow(tr("Planner"), planner_combo_);
  auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);
  ok_button_ = buttons->button(QDialogButtonBox::Ok);
  ok_button_->setText(tr("Plan"));
  connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
  connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);

  auto* layout = new QVBoxLayout(this);
  auto* intro =
      new QLabel(tr("Choose the split of the open experiment for this cluster. The plan replaces "
                    "the parallel settings; Plan > Undo plan puts them back."),
                 this);
  intro->setWordWrap(true);
  layout->addWidget(intro);
  layout->addLayout(form);
  layout->addWidget(planner_description_);
  layout->addWidget(problem_label_);
  layout->addWidget(buttons);

  connect(devices_spin_, &QSpinBox::valueChanged, this, &PlanDialog::refresh);
  connect(memory_edit_, &QLineEdit::textChanged, this, &PlanDialog::refresh);
  connect(planner_combo_, &QComboBox::currentIndexChanged, this, &PlanDialog::refresh);
  refresh();
}

std::optional<PlanRequest> PlanDialog::request() const {
  const std::optional<int64_t> memory =
      parse_byte_size(memory_edit_->text().trimmed().toStdString());
  if (!memory || *memory == 0 || devices_spin_->value() % tp_ != 0) return std::nullopt;
  PlanRequest request;
  request.planner = static_cast<PlannerKind>(planner_combo_->currentData().toInt());
  request.devices = devices_spin_->value();
  request.memory_per_device = *memory;
  return request;
}

void PlanDialog::refresh() {
  const auto kind = static_cast<PlannerKind>(planner_combo_->currentData().toInt());
  planner_description_->setText(QCoreApplication::translate("core", planner_description(kind)));
  QString problem;
  const std::optional<int64_t> memory =
      parse_byte_size(memory_edit_->text().trimmed().toStdString());
  if (!memory || *memory == 0)
    problem = tr("Memory per device must be a size above 0, e.g. 16GiB or 80GB.");
  else if (devices_spin_->value() % tp_ != 0)
    problem = tr("Devices must be a multiple of parallel.tp = %1 (each stage replica takes %1).")
                  .arg(tp_);
  problem_label_->setText(problem);
  problem_label_->setVisible(!problem.isEmpty());
  ok_button_->setEnabled(problem.isEmpty());
}

}  // namespace pipelab
