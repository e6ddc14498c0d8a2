#include "ui/timeline/op_colors.h"

#include <algorithm>
#include <array>

namespace pipelab {

QColor op_role_color(OpColorRole role) {
  switch (role) {
    case OpColorRole::Forward:
      return QColor(0x3b, 0x7d, 0xd8);  // blue
    case OpColorRole::Backward:
      return QColor(0x2e, 0xa0, 0x43);  // green
    case OpColorRole::BackwardInput:
      return QColor(0x8f, 0xd1, 0x7e);  // light green
    case OpColorRole::BackwardWeight:
      return QColor(0x1b, 0x5e, 0x20);  // dark green
    case OpColorRole::Update:
      return QColor(0xf0, 0x8c, 0x1a);  // orange
    case OpColorRole::Recompute:
      return QColor(0x8e, 0x44, 0xad);  // purple
    case OpColorRole::PointToPoint:
      return QColor(0x90, 0x90, 0x90);  // grey
    case OpColorRole::AllReduce:
      return QColor(0x55, 0x55, 0x55);  // dark grey
    case OpColorRole::AllToAll:
      return QColor(0x00, 0x89, 0x7b);  // teal: tokens travelling, not a sum
    case OpColorRole::ParameterServer:
      return QColor(0x6d, 0x7b, 0x8d);  // blue grey
    case OpColorRole::HostTransfer:
      return QColor(0x8d, 0x6e, 0x63);  // brown
  }
  return Qt::black;
}

QColor op_color(OpKind kind) { return op_role_color(op_kind_facts(kind).color_role); }

QColor text_color_on(const QColor& background) {
  // Perceived brightness (ITU-R BT.601 weights).
  const double luma =
      0.299 * background.redF() + 0.587 * background.greenF() + 0.114 * background.blueF();
  return luma > 0.6 ? Qt::black : Qt::white;
}

QColor bubble_color() { return QColor(0xe5, 0x73, 0x73); }

QBrush bubble_brush() { return QBrush(bubble_color(), Qt::BDiagPattern); }

namespace {

// Soft colours that keep black text readable (layer table rows).
constexpr std::array<QRgb, 8> kStageColors = {0xcfe2f3, 0xd9ead3, 0xfff2cc, 0xf4cccc,
                                              0xd9d2e9, 0xfce5cd, 0xd0e0e3, 0xead1dc};

// Strong, distinct colours for lines (Tableau 10).
constexpr std::array<QRgb, 10> kDeviceColors = {0x4e79a7, 0xf28e2b, 0xe15759, 0x76b7b2, 0x59a14f,
                                                0xedc948, 0xb07aa1, 0xff9da7, 0x9c755f, 0xbab0ac};

// Light, distinct colours for weight versions (ColorBrewer Set2).
constexpr std::array<QRgb, 6> kVersionColors = {0xffd92f, 0xe78ac3, 0x66c2a5,
                                                0xfc8d62, 0x8da0cb, 0xa6d854};

}  // namespace

QColor weight_version_color(int version) {
  return QColor(kVersionColors[static_cast<size_t>(std::max(version, 0)) % kVersionColors.size()]);
}

QColor stage_color(int stage) {
  if (stage < 0) return QColor(Qt::white);
  return QColor(kStageColors[static_cast<size_t>(stage) % kStageColors.size()]);
}

QColor device_color(int device) {
  if (device < 0) return QColor(Qt::black);
  return QColor(kDeviceColors[static_cast<size_t>(device) % kDeviceColors.size()]);
}

QColor memory_category_color(MemoryCategory category) {
  switch (category) {
    case MemoryCategory::Weights:
      return QColor(0x3b, 0x7d, 0xd8);  // like F: the model
    case MemoryCategory::Gradients:
      return QColor(0x2e, 0xa0, 0x43);  // like B
    case MemoryCategory::OptimizerState:
      return QColor(0xf0, 0x8c, 0x1a);  // like U
    case MemoryCategory::Activations:
      return QColor(0xe1, 0x57, 0x59);
    case MemoryCategory::StashedWeights:
      return QColor(0x8e, 0x44, 0xad);
    case MemoryCategory::CommBuffers:
      return QColor(0x90, 0x90, 0x90);
    case MemoryCategory::Workspace:
      return QColor(0xc8, 0xb8, 0x6b);
    case MemoryCategory::Host:
      return QColor(0x8d, 0x6e, 0x63);  // like offload/reload: brown
  }
  return Qt::black;
}

}  // namespace pipelab
