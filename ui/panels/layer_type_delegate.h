// LayerTypeDelegate: edits the layer table's Type column with a drop-down of
// the known layer types, so a user cannot type one that does not exist.
#pragma once

#include <QStyledItemDelegate>

namespace pipelab {

class LayerTypeDelegate : public QStyledItemDelegate {
  Q_OBJECT

 public:
  using QStyledItemDelegate::QStyledItemDelegate;

  QWidget* createEditor(QWidget* parent, const QStyleOptionViewItem& option,
                        const QModelIndex& index) const override;
  void setEditorData(QWidget* editor, const QModelIndex& index) const override;
  void setModelData(QWidget* editor, QAbstractItemModel* model,
                    const QModelIndex& index) const override;
};

}  // namespace pipelab
