// LayerTableModel: the model's layer stack as an editable table. Each row is a
// layer: its type, its size setting, what it costs (derived with
// describe_layers) and the pipeline stage the partition puts it on; rows are
// coloured by that stage. Edits go through the ExperimentDocument.
#pragma once

#include <QAbstractTableModel>
#include <QString>
#include <vector>

#include "core/model/model_spec.h"

namespace pipelab {

class ExperimentDocument;

class LayerTableModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  enum Column {
    TypeColumn,   // linear, relu, ... (editable)
    SizeColumn,   // linear: output width; dropout: drop probability (editable)
    BiasColumn,   // linear: checkable
    StageColumn,  // early, so a narrow panel still shows it
    ShapeColumn,  // "784 → 128"
    ParamsColumn,
    FlopsColumn,       // forward FLOPs per sample
    ActivationColumn,  // bytes kept for backward, per sample
    ColumnCount
  };

  explicit LayerTableModel(ExperimentDocument* document, QObject* parent = nullptr);

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation,
                      int role = Qt::DisplayRole) const override;
  Qt::ItemFlags flags(const QModelIndex& index) const override;
  // Rejects (returns false and emits editRejected) a width below 1, a drop
  // probability outside [0, 1) and an unknown layer type.
  bool setData(const QModelIndex& index, const QVariant& value, int role = Qt::EditRole) override;

  // Layer-stack edits. Explicit stage boundaries shift with inserted and
  // removed layers so each stage keeps the layers it had.
  void insertLayer(int row, const LayerSpec& layer);
  bool removeLayer(int row);
  bool moveLayer(int from, int to);

  // The stage each layer lands on (-1 when the split is impossible).
  int stageOfLayer(int row) const;
  // Why costs or stages are missing (an inconsistent layer, an impossible
  // split); empty when everything is known.
  QString problem() const { return problem_; }

  // Layer type names in menu order (linear, relu, ...).
  static QStringList layerTypeNames();

 signals:
  void editRejected(const QString& reason);

 private:
  void refresh();  // re-derives costs and stages from the document

  ExperimentDocument* document_;
  std::vector<LayerInfo> infos_;  // empty when describe_layers failed
  std::vector<int> stages_;       // one per layer, empty when the split failed
  QString problem_;
};

}  // namespace pipelab
