#include "ui/panels/model_panel.h"

#include <QCheckBox>
#include <QComboBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QRegularExpression>
#include <QRegularExpressionValidator>
#include <QSignalBlocker>
#include <QTableView>
#include <QVBoxLayout>
#include <exception>

#include "core/plan/partition.h"
#include "ui/models/experiment_document.h"
#include "ui/models/layer_table_model.h"
#include "ui/models/model_templates.h"
#include "ui/number_text.h"
#include "ui/panels/layer_type_delegate.h"
#include "ui/panels/local_arrow_keys.h"
#include "ui/panels/problem_label.h"

namespace pipelab {
namespace {

// "1, 28, 28" or "1x28x28" -> {1, 28, 28}; empty on a malformed text.
std::vector<int64_t> parse_int_list(const QString& text) {
  std::vector<int64_t> values;
  const QStringList parts =
      text.split(QRegularExpression(QStringLiteral("[,x×\\s]+")), Qt::SkipEmptyParts);
  for (const QString& part : parts) {
    bool ok = false;
    const qlonglong value = part.toLongLong(&ok);
    if (!ok) return {};
    values.push_back(value);
  }
  return values;
}

template <typename T>
QString join_ints(const std::vector<T>& values) {
  QStringList parts;
  for (T value : values) parts << QString::number(value);
  return parts.join(QStringLiteral(", "));
}

}  // namespace

ModelPanel::ModelPanel(ExperimentDocument* document, QWidget* parent)
    : QWidget(parent), document_(document) {
  layer_model_ = new LayerTableModel(document_, this);

  input_edit_ = new QLineEdit(this);
  input_edit_->setValidator(new QRegularExpressionValidator(
      QRegularExpression(QStringLiteral("\\s*\\d+(\\s*[,x×]\\s*\\d+)*\\s*")), input_edit_));
  input_edit_->setToolTip(tr("Shape of one input sample, e.g. 2 or 1, 28, 28"));
  loss_combo_ = new QComboBox(this);
  for (LossType loss : {LossType::CrossEntropy, LossType::Mse})
    loss_combo_->addItem(QString::fromLatin1(loss_type_name(loss)), static_cast<int>(loss));

  template_combo_ = new QComboBox(this);
  template_combo_->addItem(tr("Start from a Transformer…"));
  for (const ModelTemplate& model_template : model_templates())
    template_combo_->addItem(model_template.title, model_template.id);
  template_combo_->setToolTip(
      tr("Fills the layer table, data and split with a GPT-style model. The predict-only ones are "
         "too big to train here; the simulator still predicts their time and memory per device."));

  layer_view_ = new QTableView(this);
  layer_view_->setModel(layer_model_);
  layer_view_->setItemDelegateForColumn(LayerTableModel::TypeColumn,
                                        new LayerTypeDelegate(layer_view_));
  layer_view_->setSelectionBehavior(QAbstractItemView::SelectRows);
  layer_view_->setSelectionMode(QAbstractItemView::SingleSelection);
  layer_view_->setEditTriggers(QAbstractItemView::DoubleClicked |
                               QAbstractItemView::SelectedClicked |
                               QAbstractItemView::EditKeyPressed);
  layer_view_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  layer_view_->horizontalHeader()->setStretchLastSection(true);
  layer_view_->verticalHeader()->setDefaultSectionSize(22);
  LocalArrowKeys::install(layer_view_, true);  // arrows move between cells, Space toggles bias

  add_button_ = new QPushButton(tr("Add"), this);
  add_button_->setToolTip(tr("Insert a layer after the selected one"));
  remove_button_ = new QPushButton(tr("Remove"), this);
  up_button_ = new QPushButton(tr("Move up"), this);
  down_button_ = new QPushButton(tr("Move down"), this);

  manual_split_check_ = new QCheckBox(tr("Set stage boundaries by hand:"), this);
  manual_split_check_->setToolTip(
      tr("Off: the partition rule (Parallelism panel) places the stage boundaries"));
  boundaries_edit_ = new QLineEdit(this);
  boundaries_edit_->setPlaceholderText(tr("first layer of each stage after the first, e.g. 2, 4"));
  boundaries_edit_->setValidator(new QRegularExpressionValidator(
      QRegularExpression(QStringLiteral("[\\d,\\s]*")), boundaries_edit_));

  summary_label_ = new QLabel(this);
  problem_label_ = new ProblemLabel(this);

  auto* form = new QFormLayout;
  form->addRow(tr("Template:"), template_combo_);
  form->addRow(tr("Input shape:"), input_edit_);
  form->addRow(tr("Loss:"), loss_combo_);

  auto* buttons = new QHBoxLayout;
  buttons->addWidget(add_button_);
  buttons->addWidget(remove_button_);
  buttons->addWidget(up_button_);
  buttons->addWidget(down_button_);
  buttons->addStretch();

  auto* split_row = new QHBoxLayout;
  split_row->addWidget(manual_split_check_);
  split_row->addWidget(boundaries_edit_, 1);

  auto* layout = new QVBoxLayout(this);
  layout->addLayout(form);
  layout->addWidget(layer_view_, 1);
  layout->addLayout(buttons);
  layout->addLayout(split_row);
  layout->addWidget(summary_label_);
  layout->addWidget(problem_label_);

  connect(add_button_, &QPushButton::clicked, this, &ModelPanel::addLayer);
  connect(remove_button_, &QPushButton::clicked, this, &ModelPanel::removeLayer);
  connect(up_button_, &QPushButton::clicked, this, [this] { moveSelected(-1); });
  connect(down_button_, &QPushButton::clicked, this, [this] { moveSelected(+1); });
  connect(manual_split_check_, &QCheckBox::toggled, this, &ModelPanel::setManualBoundaries);
  connect(boundaries_edit_, &QLineEdit::editingFinished, this, &ModelPanel::applyBoundariesText);
  connect(input_edit_, &QLineEdit::editingFinished, this, &ModelPanel::applyInputText);
  connect(template_combo_, &QComboBox::activated, this, [this](int index) {
    applyTemplate(index);
    const QSignalBlocker blocker(template_combo_);
    template_combo_->setCurrentIndex(0);  // a one-shot action, not a setting
  });
  connect(loss_combo_, &QComboBox::activated, this, [this] {
    const auto loss = static_cast<LossType>(loss_combo_->currentData().toInt());
    document_->edit([loss](Experiment& e) { e.model.loss = loss; });
  });
  connect(layer_model_, &LayerTableModel::editRejected, this, [this](const QString& reason) {
    rejected_edit_ = reason;
    showProblems();
  });
  connect(layer_view_->selectionModel(), &QItemSelectionModel::selectionChanged, this,
          &ModelPanel::updateButtons);
  connect(document_, &ExperimentDocument::changed, this, [this] {
    rejected_edit_.clear();
    refreshFromDocument();
  });
  refreshFromDocument();
}

void ModelPanel::applyTemplate(int index) {
  const std::vector<ModelTemplate> templates = model_templates();
  if (index < 1 || index > static_cast<int>(templates.size())) return;  // 0: the prompt
  try {
    const Experiment from_template = load_model_template(templates[static_cast<size_t>(index - 1)]);
    document_->edit([&](Experiment& e) { e = apply_model_template(e, from_template); });
  } catch (const std::exception& error) {
    rejected_edit_ = QString::fromStdString(error.what());
    showProblems();
  }
}

void ModelPanel::refreshFromDocument() {
  const Experiment& experiment = document_->experiment();
  {
    const QSignalBlocker blocker(input_edit_);
    if (!input_edit_->hasFocus()) input_edit_->setText(join_ints(experiment.model.input));
  }
  {
    const QSignalBlocker blocker(loss_combo_);
    loss_combo_->setCurrentIndex(loss_combo_->findData(static_cast<int>(experiment.model.loss)));
  }
  const bool manual = experiment.parallel.partition == PartitionRule::Explicit;
  {
    const QSignalBlocker blocker(manual_split_check_);
    manual_split_check_->setChecked(manual);
  }
  boundaries_edit_->setEnabled(manual);
  if (!boundaries_edit_->hasFocus()) {
    if (manual) {
      boundaries_edit_->setText(join_ints(experiment.parallel.boundaries));
    } else {
      // Show where the rule puts the boundaries, read-only.
      std::vector<int> begins;
      try {
        const auto ranges = partition_layers(experiment.model, experiment.parallel);
        for (size_t stage = 1; stage < ranges.size(); ++stage)
          begins.push_back(ranges[stage].begin);
      } catch (const std::exception&) {
      }
      boundaries_edit_->setText(join_ints(begins));
    }
  }

  int64_t params = 0;
  try {
    for (const LayerInfo& info : describe_layers(experiment.model)) params += info.params;
  } catch (const std::exception&) {
  }
  summary_label_->setText(
      tr("%1 layers · %2 parameters · %3 pipeline stages (%4)")
          .arg(experiment.model.layers.size())
          .arg(count_text(double(params)))
          .arg(experiment.parallel.stages())
          .arg(manual
                   ? tr("set by hand")
                   : tr("rule: %1")
                         .arg(QString::fromLatin1(partition_name(experiment.parallel.partition)))));
  updateButtons();
  showProblems();
}

void ModelPanel::updateButtons() {
  const int row = selectedRow();
  const int count = layer_model_->rowCount();
  remove_button_->setEnabled(row >= 0 && count > 1);
  up_button_->setEnabled(row > 0);
  down_button_->setEnabled(row >= 0 && row + 1 < count);
}

void ModelPanel::setProblems(const QStringList& problems) {
  validation_problems_ = problems;
  showProblems();
}

void ModelPanel::showProblems() {
  QStringList all;
  if (!rejected_edit_.isEmpty()) all << rejected_edit_;
  const QString model_problem = layer_model_->problem();
  if (!model_problem.isEmpty()) all << model_problem;
  for (const QString& problem : validation_problems_)
    if (!all.contains(problem)) all << problem;
  problem_label_->setProblems(all);
}

int ModelPanel::selectedRow() const {
  if (!layer_view_->selectionModel()) return -1;
  const QModelIndexList rows = layer_view_->selectionModel()->selectedRows();
  if (!rows.isEmpty()) return rows.first().row();
  const QModelIndex current = layer_view_->currentIndex();
  return current.isValid() ? current.row() : -1;
}

void ModelPanel::addLayer() {
  const int row = selectedRow();
  const int insert_at = row < 0 ? layer_model_->rowCount() : row + 1;
  LayerSpec layer;
  layer.type = LayerType::Linear;
  layer.out = 64;
  layer_model_->insertLayer(insert_at, layer);
  layer_view_->selectRow(insert_at);
}

void ModelPanel::removeLayer() {
  const int row = selectedRow();
  if (row < 0) return;
  layer_model_->removeLayer(row);
  layer_view_->selectRow(std::min(row, layer_model_->rowCount() - 1));
}

void ModelPanel::moveSelected(int delta) {
  const int row = selectedRow();
  if (row < 0) return;
  if (layer_model_->moveLayer(row, row + delta)) layer_view_->selectRow(row + delta);
}

void ModelPanel::setManualBoundaries(bool manual) {
  if (!manual) {
    document_->edit([](Experiment& e) {
      if (e.parallel.partition == PartitionRule::Explicit)
        e.parallel.partition = PartitionRule::Balanced;
      e.parallel.boundaries.clear();
    });
    return;
  }
  document_->edit([](Experiment& e) {
    // Start from where the current rule puts the boundaries, so the split does
    // not jump when the user takes over.
    std::vector<int> begins;
    try {
      const auto ranges = partition_layers(e.model, e.parallel);
      for (size_t stage = 1; stage < ranges.size(); ++stage) begins.push_back(ranges[stage].begin);
    } catch (const std::exception&) {
    }
    e.parallel.partition = PartitionRule::Explicit;
    e.parallel.boundaries = begins;
  });
}

void ModelPanel::applyBoundariesText() {
  if (!manual_split_check_->isChecked()) return;
  std::vector<int> boundaries;
  for (int64_t value : parse_int_list(boundaries_edit_->text()))
    boundaries.push_back(static_cast<int>(value));
  document_->edit([&](Experiment& e) { e.parallel.boundaries = boundaries; });
}

void ModelPanel::applyInputText() {
  const std::vector<int64_t> shape = parse_int_list(input_edit_->text());
  if (shape.empty()) return;
  document_->edit([&](Experiment& e) { e.model.input = shape; });
}

}  // namespace pipelab
