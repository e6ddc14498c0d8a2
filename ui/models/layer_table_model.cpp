#include "ui/models/layer_table_model.h"

#include <QBrush>
#include <algorithm>
#include <exception>

#include "core/plan/partition.h"
#include "ui/models/experiment_document.h"
#include "ui/number_text.h"
#include "ui/timeline/op_colors.h"

namespace pipelab {
namespace {

// Linears, convolutions and transformer blocks have biases a user can switch off.
bool has_bias_setting(LayerType type) {
  return type == LayerType::Linear || type == LayerType::Conv2d || type == LayerType::TransformerBlock;
}

// The layers whose Size column holds output channels.
bool sized_by_channels(LayerType type) { return type == LayerType::Conv2d || type == LayerType::ResidualBlock; }
bool is_pool(LayerType type) { return type == LayerType::MaxPool || type == LayerType::AvgPool; }

QString image_text(const ImageShape& image) {
  return QStringLiteral("%1×%2×%3").arg(image.channels).arg(image.height).arg(image.width);
}

}  // namespace

LayerTableModel::LayerTableModel(ExperimentDocument* document, QObject* parent)
    : QAbstractTableModel(parent), document_(document) {
  refresh();
  connect(document_, &ExperimentDocument::changed, this, [this] {
    beginResetModel();
    refresh();
    endResetModel();
  });
}

QStringList LayerTableModel::layerTypeNames() {
  QStringList names;
  for (const std::string& name : layer_type_names()) names << QString::fromStdString(name);
  return names;
}

void LayerTableModel::refresh() {
  const Experiment& experiment = document_->experiment();
  infos_.clear();
  stages_.clear();
  problem_.clear();
  try {
    infos_ = describe_layers(experiment.model);
  } catch (const std::exception& e) {
    problem_ = QString::fromStdString(e.what());
    return;
  }
  try {
    const std::vector<LayerRange> ranges = partition_layers(experiment.model, experiment.parallel);
    stages_.assign(experiment.model.layers.size(), -1);
    for (size_t stage = 0; stage < ranges.size(); ++stage) {
      for (int layer = ranges[stage].begin; layer < ranges[stage].end; ++layer) {
        if (layer >= 0 && layer < static_cast<int>(stages_.size())) stages_[layer] = int(stage);
      }
    }
  } catch (const std::exception& e) {
    stages_.clear();
    problem_ = QString::fromStdString(e.what());
  }
}

int LayerTableModel::rowCount(const QModelIndex& parent) const {
  if (parent.isValid()) return 0;
  return static_cast<int>(document_->experiment().model.layers.size());
}

int LayerTableModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : ColumnCount;
}

int LayerTableModel::stageOfLayer(int row) const {
  if (row < 0 || row >= static_cast<int>(stages_.size())) return -1;
  return stages_[row];
}

QVariant LayerTableModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= rowCount()) return {};
  const int row = index.row();
  const LayerSpec& layer = document_->experiment().model.layers[row];
  const LayerInfo* info = row < static_cast<int>(infos_.size()) ? &infos_[row] : nullptr;
  const int stage = stageOfLayer(row);

  if (role == Qt::BackgroundRole) return QBrush(stage_color(stage));
  if (role == Qt::ToolTipRole) {
    if (stage < 0) return tr("Layer %1: no stage (%2)").arg(row).arg(problem_);
    ParallelPlan plan = document_->experiment().parallel;
    plan.pp = std::max(1, plan.pp);
    return tr("Layer %1 runs in pipeline stage %2 on pipeline device %3")
        .arg(row)
        .arg(stage)
        .arg(plan.layout().rank_of_stage(stage));
  }
  if (role == Qt::CheckStateRole && index.column() == BiasColumn && has_bias_setting(layer.type)) {
    return layer.bias ? Qt::Checked : Qt::Unchecked;
  }
  if (role == Qt::TextAlignmentRole && index.column() >= StageColumn) {
    return QVariant(Qt::AlignRight | Qt::AlignVCenter);
  }
  if (role != Qt::DisplayRole && role != Qt::EditRole) return {};

  switch (index.column()) {
    case TypeColumn:
      return QString::fromLatin1(layer_type_name(layer.type));
    case SizeColumn:
      if (layer.type == LayerType::Linear) return QVariant::fromValue<qlonglong>(layer.out);
      if (layer.type == LayerType::Dropout) return layer.p;
      if (layer.type == LayerType::Embedding) {
        if (role == Qt::EditRole) return QVariant::fromValue<qlonglong>(layer.dim);
        if (layer.position == PositionEncoding::Rope && layer.rope_theta != kDefaultRopeTheta)
          return tr("%1 (vocab %2, rotary positions, base %3)")
              .arg(layer.dim)
              .arg(layer.vocab)
              .arg(layer.rope_theta);
        if (layer.position == PositionEncoding::Rope)
          return tr("%1 (vocab %2, rotary positions)").arg(layer.dim).arg(layer.vocab);
        return tr("%1 (vocab %2)").arg(layer.dim).arg(layer.vocab);
      }
      if (layer.type == LayerType::TransformerBlock) {
        if (role == Qt::EditRole) return QVariant::fromValue<qlonglong>(layer.heads);
        QString heads = layer.heads == 1 ? tr("1 head") : tr("%1 heads").arg(layer.heads);
        if (layer.kv_heads > 0 && layer.kv_heads != layer.heads)
          heads = tr("%1 (%2 key/value)").arg(heads).arg(layer.kv_heads);
        if (layer.experts < 1) return heads;
        return tr("%1, %2 experts, top-%3").arg(heads).arg(layer.experts).arg(layer.top_k);
      }
      if (sized_by_channels(layer.type)) {
        if (role == Qt::EditRole) return QVariant::fromValue<qlonglong>(layer.out);
        const Window window = layer_window(layer);
        return tr("%1 ch, %2×%2 /%3").arg(layer.out).arg(window.kernel).arg(window.stride);
      }
      if (is_pool(layer.type)) {
        if (role == Qt::EditRole) return QVariant::fromValue<qlonglong>(layer.kernel);
        return QStringLiteral("%1×%1 /%2").arg(layer.kernel).arg(layer.stride);
      }
      if (layer.type == LayerType::BatchNorm && role == Qt::DisplayRole)
        return layer.sync ? tr("synced") : tr("local");
      if (layer.type == LayerType::Moe) {
        if (role == Qt::EditRole) return QVariant::fromValue<qlonglong>(layer.experts);
        return tr("%1 experts, top-%2").arg(layer.experts).arg(layer.top_k);
      }
      return role == Qt::EditRole ? QVariant() : QVariant(QStringLiteral("—"));
    case BiasColumn:
      return {};
    case ShapeColumn:
      if (!info) return QStringLiteral("?");
      if (info->type == LayerType::Embedding)
        return tr("%1 ids → %1×%2").arg(info->tokens).arg(info->token_out());
      if (info->image_in.valid() || info->image_out.valid())
        return QStringLiteral("%1 → %2")
            .arg(info->image_in.valid() ? image_text(info->image_in) : QString::number(info->in_features),
                 info->image_out.valid() ? image_text(info->image_out) : QString::number(info->out_features));
      if (info->tokens > 1)  // per position: sequence length × width
        return QStringLiteral("%1×%2 → %1×%3").arg(info->tokens).arg(info->token_in()).arg(info->token_out());
      return QStringLiteral("%1 → %2").arg(info->in_features).arg(info->out_features);
    case ParamsColumn:
      return info ? count_text(double(info->params)) : QStringLiteral("?");
    case FlopsColumn:
      return info ? count_text(info->forward_flops) : QStringLiteral("?");
    case ActivationColumn:
      return info ? bytes_text(double(info->activation_bytes)) : QStringLiteral("?");
    case StageColumn:
      return stage < 0 ? QStringLiteral("—") : QString::number(stage);
    default:
      return {};
  }
}

QVariant LayerTableModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation == Qt::Vertical) return role == Qt::DisplayRole ? QVariant(section) : QVariant();
  if (role == Qt::ToolTipRole) {
    switch (section) {
      case SizeColumn:
        return tr("Linear: output width. Dropout: drop probability. Embedding: width per token. "
                  "Transformer block: attention heads. Conv2d and residual block: output channels "
                  "(with kernel and stride). Pools: the window (stride follows it). Batch norm: "
                  "synced over data-parallel replicas or local. MoE: the number of experts (and top-k).");
      case StageColumn:
        return tr("The pipeline stage the split puts the layer on");
      case FlopsColumn:
        return tr("Forward FLOPs per sample (a multiply-add counts as two)");
      case ActivationColumn:
        return tr("Bytes per sample kept from the forward for the backward");
      default:
        return {};
    }
  }
  if (role != Qt::DisplayRole) return {};
  switch (section) {
    case TypeColumn:
      return tr("Type");
    case SizeColumn:
      return tr("Size");
    case BiasColumn:
      return tr("Bias");
    case StageColumn:
      return tr("Stage");
    case ShapeColumn:
      return tr("In → out");
    case ParamsColumn:
      return tr("Params");
    case FlopsColumn:
      return tr("FLOPs");
    case ActivationColumn:
      return tr("Activations");
    default:
      return {};
  }
}

Qt::ItemFlags LayerTableModel::flags(const QModelIndex& index) const {
  if (!index.isValid()) return Qt::NoItemFlags;
  Qt::ItemFlags flags = Qt::ItemIsEnabled | Qt::ItemIsSelectable;
  const LayerType type = document_->experiment().model.layers[index.row()].type;
  if (index.column() == TypeColumn) flags |= Qt::ItemIsEditable;
  const bool has_size = type == LayerType::Linear || type == LayerType::Dropout || type == LayerType::Embedding ||
                        type == LayerType::TransformerBlock || sized_by_channels(type) || is_pool(type) ||
                        type == LayerType::Moe;
  if (index.column() == SizeColumn && has_size) flags |= Qt::ItemIsEditable;
  if (index.column() == BiasColumn && has_bias_setting(type)) flags |= Qt::ItemIsUserCheckable;
  return flags;
}

bool LayerTableModel::setData(const QModelIndex& index, const QVariant& value, int role) {
  if (!index.isValid() || index.row() >= rowCount()) return false;
  const int row = index.row();
  const LayerSpec& current = document_->experiment().model.layers[row];

  if (index.column() == BiasColumn && role == Qt::CheckStateRole) {
    if (!has_bias_setting(current.type)) return false;
    const bool bias = value.toInt() == Qt::Checked;
    document_->edit([&](Experiment& e) { e.model.layers[row].bias = bias; });
    return true;
  }
  if (role != Qt::EditRole) return false;

  if (index.column() == TypeColumn) {
    const auto type = parse_layer_type(value.toString().trimmed().toStdString());
    if (!type) {
      emit editRejected(tr("'%1' is not a layer type; choose one of: %2")
                            .arg(value.toString(), layerTypeNames().join(", ")));
      return false;
    }
    document_->edit([&](Experiment& e) {
      LayerSpec& layer = e.model.layers[row];
      layer.type = *type;
      // A layer that becomes linear needs a width; keep the one it had, if any.
      if (layer.type == LayerType::Linear && layer.out < 1) layer.out = 64;
      if (layer.type == LayerType::Embedding && layer.vocab < 1) layer.vocab = 256;
      if (layer.type == LayerType::Embedding && layer.dim < 1) layer.dim = 64;
      if (layer.type == LayerType::TransformerBlock && layer.heads < 1) layer.heads = 4;
      if (sized_by_channels(layer.type) && layer.out < 1) layer.out = 16;
      if (is_pool(layer.type)) layer.kernel = layer.stride = 2;
      if (layer.type == LayerType::Moe && layer.experts < 1) layer.experts = 4;
    });
    return true;
  }

  if (index.column() == SizeColumn && current.type == LayerType::Linear) {
    bool ok = false;
    const qlonglong width = value.toLongLong(&ok);
    if (!ok || width < 1) {
      emit editRejected(tr("Layer %1: the width must be a whole number of at least 1 (got '%2')")
                            .arg(row)
                            .arg(value.toString()));
      return false;
    }
    document_->edit([&](Experiment& e) { e.model.layers[row].out = width; });
    return true;
  }
  if (index.column() == SizeColumn &&
      (current.type == LayerType::Embedding || current.type == LayerType::TransformerBlock)) {
    const bool embedding = current.type == LayerType::Embedding;
    bool ok = false;
    const qlonglong size = value.toLongLong(&ok);
    if (!ok || size < 1) {
      emit editRejected((embedding ? tr("Layer %1: the width per token must be a whole number of at least 1 (got '%2')")
                                   : tr("Layer %1: the number of heads must be a whole number of at least 1 (got '%2')"))
                            .arg(row)
                            .arg(value.toString()));
      return false;
    }
    document_->edit([&](Experiment& e) { (embedding ? e.model.layers[row].dim : e.model.layers[row].heads) = size; });
    return true;
  }
  if (index.column() == SizeColumn && (sized_by_channels(current.type) || is_pool(current.type))) {
    const bool pool = is_pool(current.type);
    bool ok = false;
    const qlonglong size = value.toLongLong(&ok);
    if (!ok || size < 1) {
      emit editRejected((pool ? tr("Layer %1: the window must be a whole number of at least 1 (got '%2')")
                              : tr("Layer %1: the output channels must be a whole number of at least 1 (got '%2')"))
                            .arg(row)
                            .arg(value.toString()));
      return false;
    }
    document_->edit([&](Experiment& e) {
      LayerSpec& layer = e.model.layers[row];
      if (pool)
        layer.kernel = layer.stride = size;  // non-overlapping windows, the usual pooling
      else
        layer.out = size;
    });
    return true;
  }
  if (index.column() == SizeColumn && current.type == LayerType::Moe) {
    bool ok = false;
    const qlonglong experts = value.toLongLong(&ok);
    if (!ok || experts < current.top_k) {
      emit editRejected(tr("Layer %1: the experts must be a whole number of at least top_k = %2 (got '%3')")
                            .arg(row)
                            .arg(current.top_k)
                            .arg(value.toString()));
      return false;
    }
    document_->edit([&](Experiment& e) { e.model.layers[row].experts = experts; });
    return true;
  }
  if (index.column() == SizeColumn && current.type == LayerType::Dropout) {
    bool ok = false;
    const double p = value.toDouble(&ok);
    if (!ok || p < 0 || p >= 1) {
      emit editRejected(tr("Layer %1: the drop probability must be in [0, 1) (got '%2')")
                            .arg(row)
                            .arg(value.toString()));
      return false;
    }
    document_->edit([&](Experiment& e) { e.model.layers[row].p = p; });
    return true;
  }
  return false;
}

void LayerTableModel::insertLayer(int row, const LayerSpec& layer) {
  const int count = rowCount();
  row = std::clamp(row, 0, count);
  document_->edit([&](Experiment& e) {
    e.model.layers.insert(e.model.layers.begin() + row, layer);
    // A boundary at or after the new row moves down with the layer it names.
    for (int& boundary : e.parallel.boundaries)
      if (boundary > row) ++boundary;
  });
}

bool LayerTableModel::removeLayer(int row) {
  if (row < 0 || row >= rowCount()) return false;
  document_->edit([&](Experiment& e) {
    e.model.layers.erase(e.model.layers.begin() + row);
    for (int& boundary : e.parallel.boundaries)
      if (boundary > row) --boundary;
    // Two boundaries can now name the same layer; the stage between them emptied.
    auto& b = e.parallel.boundaries;
    b.erase(std::unique(b.begin(), b.end()), b.end());
  });
  return true;
}

bool LayerTableModel::moveLayer(int from, int to) {
  const int count = rowCount();
  if (from < 0 || from >= count || to < 0 || to >= count || from == to) return false;
  document_->edit([&](Experiment& e) {
    auto& layers = e.model.layers;
    const LayerSpec moved = layers[from];
    layers.erase(layers.begin() + from);
    layers.insert(layers.begin() + to, moved);
  });
  return true;
}

}  // namespace pipelab
