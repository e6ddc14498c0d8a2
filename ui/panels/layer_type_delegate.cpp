#include "ui/panels/layer_type_delegate.h"

#include <QComboBox>

#include "ui/models/layer_table_model.h"

namespace pipelab {

QWidget* LayerTypeDelegate::createEditor(QWidget* parent, const QStyleOptionViewItem&,
                                         const QModelIndex&) const {
  auto* combo = new QComboBox(parent);
  combo->addItems(LayerTableModel::layerTypeNames());
  // Commit as soon as a type is picked, not only when the editor loses focus.
  connect(combo, &QComboBox::activated, this, [this, combo] {
    auto* self = const_cast<LayerTypeDelegate*>(this);
    emit self->commitData(combo);
    emit self->closeEditor(combo);
  });
  return combo;
}

void LayerTypeDelegate::setEditorData(QWidget* editor, const QModelIndex& index) const {
  auto* combo = static_cast<QComboBox*>(editor);
  combo->setCurrentText(index.data(Qt::EditRole).toString());
}

void LayerTypeDelegate::setModelData(QWidget* editor, QAbstractItemModel* model,
                                     const QModelIndex& index) const {
  auto* combo = static_cast<QComboBox*>(editor);
  model->setData(index, combo->currentText(), Qt::EditRole);
}

}  // namespace pipelab
