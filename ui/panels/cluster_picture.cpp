#include "ui/panels/cluster_picture.h"

#include <QHelpEvent>
#include <QPainter>
#include <QToolTip>
#include <algorithm>

#include "ui/timeline/op_colors.h"

namespace pipelab {
namespace {

constexpr int kSlot = 22;        // a device's square, pixels
constexpr int kGap = 3;          // between slots
constexpr int kPad = 5;          // inside a node's box
constexpr int kNodeGap = 8;      // between boxes
constexpr int kSlotsPerRow = 8;  // a node of 16 slots draws two rows
constexpr int kLineHeight = 16;  // the "more nodes" line

}  // namespace

ClusterPicture::ClusterPicture(QWidget* parent) : QWidget(parent) {
  setSizePolicy(QSizePolicy::Preferred, QSizePolicy::Fixed);
  setMouseTracking(true);
}

void ClusterPicture::setPlacement(const DeviceLayout& layout, const ClusterTopology& topology) {
  layout_ = layout;
  devices_per_node_ = topology.devices_per_node;
  slots_.clear();
  // Node n holds Megatron ranks [n x devices_per_node, (n + 1) x devices_per_node).
  for (int device = 0; device < static_cast<int>(topology.node_of_device.size()); ++device) {
    const size_t node = static_cast<size_t>(topology.node(device));
    if (slots_.size() <= node)
      slots_.resize(node + 1, std::vector<int>(static_cast<size_t>(devices_per_node_), -1));
    slots_[node][static_cast<size_t>(megatron_rank(layout, device) % devices_per_node_)] = device;
  }
  updateGeometry();
  update();
}

void ClusterPicture::clear() {
  slots_.clear();
  devices_per_node_ = 0;
  updateGeometry();
  update();
}

int ClusterPicture::nodesDrawn() const { return std::min(nodesUsed(), kMaxDrawnNodes); }

int ClusterPicture::deviceInSlot(int node, int slot) const {
  if (node < 0 || node >= nodesDrawn() || slot < 0 || slot >= devices_per_node_) return -1;
  return slots_[static_cast<size_t>(node)][static_cast<size_t>(slot)];
}

QString ClusterPicture::moreText() const {
  const int more = nodesUsed() - nodesDrawn();
  if (more <= 0) return {};
  return more == 1 ? tr("… and one more node like these")
                   : tr("… and %1 more nodes like these").arg(more);
}

QSize ClusterPicture::boxSize() const {
  const int per_row = std::min(devices_per_node_, kSlotsPerRow);
  const int rows = (devices_per_node_ + kSlotsPerRow - 1) / kSlotsPerRow;
  return {2 * kPad + per_row * (kSlot + kGap) - kGap, 2 * kPad + rows * (kSlot + kGap) - kGap};
}

int ClusterPicture::columns(int width) const {
  const int box = boxSize().width();
  return std::max(1, (std::max(width, box) + kNodeGap) / (box + kNodeGap));
}

QRect ClusterPicture::nodeRect(int node, int columns) const {
  const QSize box = boxSize();
  const int column = node % columns, row = node / columns;
  return {column * (box.width() + kNodeGap), row * (box.height() + kNodeGap), box.width(),
          box.height()};
}

QRect ClusterPicture::slotRect(int node, int slot) const {
  const QRect box = nodeRect(node);
  return {box.left() + kPad + (slot % kSlotsPerRow) * (kSlot + kGap),
          box.top() + kPad + (slot / kSlotsPerRow) * (kSlot + kGap), kSlot, kSlot};
}

int ClusterPicture::heightForWidth(int width) const {
  if (nodesDrawn() == 0) return 0;
  const int height = nodeRect(nodesDrawn() - 1, columns(width)).bottom() + 1;
  return height + (moreText().isEmpty() ? 0 : kLineHeight);
}

QSize ClusterPicture::sizeHint() const {
  if (nodesDrawn() == 0) return {0, 0};
  const int width = std::max(this->width(), boxSize().width());
  return {width, heightForWidth(width)};
}

QSize ClusterPicture::minimumSizeHint() const {
  if (nodesDrawn() == 0) return {0, 0};
  return {boxSize().width(), heightForWidth(std::max(width(), boxSize().width()))};
}

void ClusterPicture::paintEvent(QPaintEvent*) {
  QPainter painter(this);
  painter.setRenderHint(QPainter::Antialiasing);
  QFont small = font();
  small.setPointSizeF(std::max(5.0, small.pointSizeF() * 0.7));
  painter.setFont(small);
  for (int node = 0; node < nodesDrawn(); ++node) {
    painter.setPen(QPen(QColor(120, 120, 120), 1));
    painter.setBrush(QColor(245, 245, 245));
    painter.drawRoundedRect(nodeRect(node), 4, 4);
    for (int slot = 0; slot < devices_per_node_; ++slot) {
      const QRect square = slotRect(node, slot);
      const int device = deviceInSlot(node, slot);
      if (device < 0) {
        painter.setPen(QPen(QColor(190, 190, 190), 1, Qt::DashLine));
        painter.setBrush(Qt::NoBrush);
        painter.drawRect(square);
        continue;
      }
      const DeviceCoord at = layout_.coord_of(device);
      const QColor colour = stage_color(at.pipeline_rank);
      painter.setPen(QPen(colour.darker(140), 1));
      painter.setBrush(colour);
      painter.drawRect(square);
      painter.setPen(colour.lightness() > 150 ? Qt::black : Qt::white);
      painter.drawText(square.adjusted(0, 0, 0, -square.height() / 2), Qt::AlignCenter,
                       QStringLiteral("t%1").arg(at.shard));
      painter.drawText(square.adjusted(0, square.height() / 2, 0, 0), Qt::AlignCenter,
                       QStringLiteral("d%1").arg(at.replica));
    }
  }
  if (!moreText().isEmpty()) {
    painter.setPen(palette().color(QPalette::WindowText));
    painter.drawText(QRect(0, nodeRect(nodesDrawn() - 1).bottom() + 2, width(), kLineHeight),
                     Qt::AlignLeft | Qt::AlignVCenter, moreText());
  }
}

bool ClusterPicture::event(QEvent* event) {
  if (event->type() != QEvent::ToolTip) return QWidget::event(event);
  const QPoint at = static_cast<QHelpEvent*>(event)->pos();
  for (int node = 0; node < nodesDrawn(); ++node)
    for (int slot = 0; slot < devices_per_node_; ++slot) {
      const int device = deviceInSlot(node, slot);
      if (device < 0 || !slotRect(node, slot).contains(at)) continue;
      const DeviceCoord coord = layout_.coord_of(device);
      QToolTip::showText(static_cast<QHelpEvent*>(event)->globalPos(),
                         tr("device %1 on node %2: stage %3, replica %4, shard %5, context rank %6")
                             .arg(device)
                             .arg(node)
                             .arg(coord.pipeline_rank)
                             .arg(coord.replica)
                             .arg(coord.shard)
                             .arg(coord.context),
                         this);
      return true;
    }
  QToolTip::hideText();
  event->ignore();
  return true;
}

}  // namespace pipelab
