// WaitGraph: who waits for whom in a schedule, to find deadlocks. Nodes are the
// ops of every device (each op waits for the previous op on its device) plus
// "virtual" nodes for things like a collective that completes once all its
// members arrive. A node that lies on or behind a cycle can never run.
#pragma once

#include <vector>

namespace pipelab {

class WaitGraph {
 public:
  // ops_per_device[d] = how many ops device d runs, in program order.
  explicit WaitGraph(const std::vector<int>& ops_per_device);

  int op_node(int device, int index) const { return device_offset_[device] + index; }
  int op_count(int device) const { return device_offset_[device + 1] - device_offset_[device]; }
  int add_virtual_node();
  // `to` cannot start before `from` has finished.
  void add_edge(int from, int to);

  // For each device, the index of its first op that can never run, or -1 when
  // the device finishes. Linear in nodes plus edges (Kahn's algorithm).
  std::vector<int> first_blocked_ops() const;

 private:
  std::vector<int> device_offset_;  // prefix sums; the last entry is the op total
  int node_count_ = 0;
  std::vector<int> edge_from_;
  std::vector<int> edge_to_;
};

}  // namespace pipelab
