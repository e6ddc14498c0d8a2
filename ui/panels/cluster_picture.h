// ClusterPicture: the nodes a prediction places the run's devices on, drawn
// small on the Parallelism panel: each node a box of its device slots, each
// device in use filled with its pipeline stage's colour and labelled with
// its tensor-parallel shard (t) and data-parallel replica (d). A student sees
// at a glance which groups stay on a node's NVLink and which cross the
// network: a colour change between two boxes is a pipeline send between
// nodes, the same d in two boxes a data-parallel group across them.
#pragma once

#include <QWidget>
#include <vector>

#include "core/plan/device_layout.h"
#include "core/sim/cluster_topology.h"

namespace pipelab {

class ClusterPicture : public QWidget {
  Q_OBJECT

 public:
  // The most nodes drawn; a larger run is drawn by its first ones and a line.
  static constexpr int kMaxDrawnNodes = 8;

  explicit ClusterPicture(QWidget* parent = nullptr);

  // The run's devices as `topology` places them.
  void setPlacement(const DeviceLayout& layout, const ClusterTopology& topology);
  void clear();

  // What is drawn, for tests: the nodes the run uses, and for a drawn node
  // the device in each of its slots (-1: an empty slot).
  int nodesUsed() const { return static_cast<int>(slots_.size()); }
  int nodesDrawn() const;
  int devicesPerNode() const { return devices_per_node_; }
  int deviceInSlot(int node, int slot) const;
  DeviceCoord coordOf(int device) const { return layout_.coord_of(device); }
  // The line under the boxes ("and N more nodes like these"), empty when all are drawn.
  QString moreText() const;

  QSize sizeHint() const override;
  QSize minimumSizeHint() const override;
  // The boxes wrap to the width, so the height follows it.
  bool hasHeightForWidth() const override { return true; }
  int heightForWidth(int width) const override;

 protected:
  void paintEvent(QPaintEvent* event) override;
  bool event(QEvent* event) override;  // a device's tooltip

 private:
  QRect slotRect(int node, int slot) const;
  QRect nodeRect(int node, int columns) const;
  QRect nodeRect(int node) const { return nodeRect(node, columns(width())); }
  QSize boxSize() const;
  int columns(int width) const;

  DeviceLayout layout_;
  int devices_per_node_ = 0;
  std::vector<std::vector<int>> slots_;  // per node used, its slots' devices (-1 empty)
};

}  // namespace pipelab
