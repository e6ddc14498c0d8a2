// Where a run's devices sit in a cluster, and the links a message between two
// of them crosses: the node's device link (NVLink) inside a node, the network
// between nodes.
//
// Placement follows Megatron-LM's rank order: tensor parallel innermost, then
// context parallel, data (and expert) parallel, pipeline outermost, i.e.
//   rank = ((pipeline_rank * dp + replica) * cp + context) * tp + shard,
// and node = rank / devices_per_node. So a tensor-parallel group of at most a
// node's size stays inside one node, and the pipeline's sends are what crosses
// the network first.
#pragma once

#include <vector>

#include "core/hardware/hardware_spec.h"
#include "core/plan/device_layout.h"

namespace pipelab {

struct ClusterTopology {
  std::vector<int> node_of_device;  // by global device id (device_layout.h)
  int devices_per_node = 1;
  double device_link_bandwidth = 0;  // bytes/s per device per direction, inside a node
  double device_link_latency_s = 0;
  // NVLink SHARP's all-reduce inside a node, bytes/s of the buffer (0: none).
  double nvls_algorithm_bandwidth = 0;
  // A device's share of its node's NICs (node bandwidth / devices per node):
  // what it gets when every device of the node talks across the network at once.
  double network_bandwidth = 0;
  double network_latency_s = 0;
  // Megatron-LM's scatter/gather of pipeline messages (on by default there):
  // under tensor parallelism without sequence parallelism every shard holds
  // the whole activation, so each sends only its 1/tp slice across the
  // network, over its own NIC share, and the receiving shards all-gather the
  // slices over the device link. 1: messages go whole.
  int pipeline_message_slices = 1;

  int node(int device) const { return node_of_device.at(static_cast<size_t>(device)); }
  bool same_node(int a, int b) const { return node(a) == node(b); }
};

// Megatron-LM's global rank of `device`.
int megatron_rank(const DeviceLayout& layout, int device);

// Every device of `layout` placed on nodes of type `node`, in Megatron order.
// With `sequence_parallel` false and a tensor-parallel group inside one node,
// pipeline messages between nodes are sent as tp slices (pipeline_message_slices).
ClusterTopology place_devices(const DeviceLayout& layout, const NodeSpec& node,
                              bool sequence_parallel = true);

// Which of a run's groups span more than one node, for a person to read.
struct PlacementSummary {
  int nodes_used = 0;
  bool tensor_parallel_crosses = false;  // some tensor-parallel group spans nodes
  bool context_parallel_crosses = false;  // some context-parallel ring spans nodes
  bool data_parallel_crosses = false;    // some data-parallel group (a stage's replicas)
  bool pipeline_crosses = false;         // some send between consecutive pipeline ranks
};
PlacementSummary summarize_placement(const DeviceLayout& layout, const ClusterTopology& topology);

}  // namespace pipelab
