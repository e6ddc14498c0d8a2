#include "core/schedule/wait_graph.h"

#include <cassert>
#include <cstddef>

namespace pipelab {

WaitGraph::WaitGraph(const std::vector<int>& ops_per_device) {
  device_offset_.resize(ops_per_device.size() + 1, 0);
  for (std::size_t d = 0; d < ops_per_device.size(); ++d)
    device_offset_[d + 1] = device_offset_[d] + ops_per_device[d];
  node_count_ = device_offset_.back();
}

int WaitGraph::add_virtual_node() { return node_count_++; }

void WaitGraph::add_edge(int from, int to) {
  assert(from >= 0 && from < node_count_ && to >= 0 && to < node_count_);
  edge_from_.push_back(from);
  edge_to_.push_back(to);
}

std::vector<int> WaitGraph::first_blocked_ops() const {
  // Program order: each op waits for the one before it on its device.
  std::vector<int> next_in_program(node_count_, -1);
  std::vector<int> waits_on(node_count_, 0);  // unfinished predecessors
  for (std::size_t d = 0; d + 1 < device_offset_.size(); ++d) {
    for (int node = device_offset_[d]; node + 1 < device_offset_[d + 1]; ++node) {
      next_in_program[node] = node + 1;
      ++waits_on[node + 1];
    }
  }
  // Extra edges in compressed rows: successors of node n are
  // successors[first_successor[n] .. first_successor[n + 1]).
  std::vector<int> first_successor(node_count_ + 1, 0);
  for (int from : edge_from_) ++first_successor[from + 1];
  for (int n = 0; n < node_count_; ++n) first_successor[n + 1] += first_successor[n];
  std::vector<int> successors(edge_to_.size());
  std::vector<int> fill = first_successor;
  for (std::size_t e = 0; e < edge_from_.size(); ++e) {
    successors[fill[edge_from_[e]]++] = edge_to_[e];
    ++waits_on[edge_to_[e]];
  }

  std::vector<int> ready;
  for (int n = 0; n < node_count_; ++n)
    if (waits_on[n] == 0) ready.push_back(n);
  std::vector<char> finished(node_count_, 0);
  auto release = [&](int node) {
    if (--waits_on[node] == 0) ready.push_back(node);
  };
  while (!ready.empty()) {
    const int node = ready.back();
    ready.pop_back();
    finished[node] = 1;
    if (next_in_program[node] >= 0) release(next_in_program[node]);
    for (int e = first_successor[node]; e < first_successor[node + 1]; ++e) release(successors[e]);
  }

  std::vector<int> blocked(device_offset_.size() - 1, -1);
  for (std::size_t d = 0; d < blocked.size(); ++d) {
    for (int node = device_offset_[d]; node < device_offset_[d + 1]; ++node) {
      if (!finished[node]) {
        blocked[d] = node - device_offset_[d];
        break;
      }
    }
  }
  return blocked;
}

}  // namespace pipelab
