#include "core/sim/cluster_topology.h"

#include <set>

namespace pipelab {

int megatron_rank(const DeviceLayout& layout, int device) {
  const DeviceCoord coord = layout.coord_of(device);
  return ((coord.pipeline_rank * layout.dp + coord.replica) * layout.cp + coord.context) * layout.tp + coord.shard;
}

ClusterTopology place_devices(const DeviceLayout& layout, const NodeSpec& node,
                              bool sequence_parallel) {
  ClusterTopology topology;
  topology.devices_per_node = node.devices_per_node;
  topology.device_link_bandwidth = node.device_link.achieved_bandwidth();
  topology.device_link_latency_s = node.device_link.latency_s;
  topology.nvls_algorithm_bandwidth = node.device_link.nvls_algorithm_bandwidth;
  topology.network_bandwidth = node.network.achieved_node_bandwidth() / node.devices_per_node;
  topology.network_latency_s = node.network.latency_s;
  topology.node_of_device.resize(static_cast<size_t>(layout.device_count()));
  for (int device = 0; device < layout.device_count(); ++device)
    topology.node_of_device[static_cast<size_t>(device)] = megatron_rank(layout, device) / node.devices_per_node;
  if (layout.tp > 1 && !sequence_parallel && layout.tp <= node.devices_per_node &&
      node.devices_per_node % layout.tp == 0)
    topology.pipeline_message_slices = layout.tp;
  return topology;
}

PlacementSummary summarize_placement(const DeviceLayout& layout, const ClusterTopology& topology) {
  PlacementSummary summary;
  std::set<int> nodes;
  for (int device = 0; device < layout.device_count(); ++device) {
    nodes.insert(topology.node(device));
    const DeviceCoord at = layout.coord_of(device);
    // Each device against its group's first member, and its next pipeline rank.
    if (!topology.same_node(device, layout.device_of(at.replica, at.pipeline_rank, 0, at.context)))
      summary.tensor_parallel_crosses = true;
    if (!topology.same_node(device, layout.device_of(at.replica, at.pipeline_rank, at.shard, 0)))
      summary.context_parallel_crosses = true;
    if (!topology.same_node(device, layout.device_of(0, at.pipeline_rank, at.shard, 0)))
      summary.data_parallel_crosses = true;
    if (at.pipeline_rank + 1 < layout.pp &&
        !topology.same_node(device, layout.device_of(at.replica, at.pipeline_rank + 1, at.shard, at.context)))
      summary.pipeline_crosses = true;
  }
  summary.nodes_used = static_cast<int>(nodes.size());
  return summary;
}

}  // namespace pipelab
