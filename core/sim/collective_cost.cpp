#include "core/sim/collective_cost.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace pipelab {
namespace {

constexpr double kNever = std::numeric_limits<double>::infinity();

// Ring steps' factor: all-reduce is a reduce-scatter then an all-gather.
double ring_passes(CollectiveKind kind) { return kind == CollectiveKind::AllReduce ? 2 : 1; }

// One ring of n members with bandwidth B and per-step latency a.
double ring(CollectiveKind kind, double bytes, int n, double bandwidth, double latency) {
  if (n <= 1) return 0;
  const double passes = ring_passes(kind);
  return passes * (n - 1) / n * bytes / bandwidth + passes * (n - 1) * latency;
}

}  // namespace

const char* collective_algorithm_name(CollectiveAlgorithm algorithm) {
  switch (algorithm) {
    case CollectiveAlgorithm::Ring: return "ring";
    case CollectiveAlgorithm::Tree: return "tree";
    case CollectiveAlgorithm::Hierarchical: return "hierarchical";
    case CollectiveAlgorithm::Direct: return "direct";
    case CollectiveAlgorithm::Nvls:
      return "nvls";
  }
  return "ring";
}

GroupSpan group_span(const ClusterTopology& topology, const std::vector<int>& members) {
  // The simulator asks at every member's arrival at every collective: sort the
  // members' nodes in a reused buffer and count the runs, with no allocation.
  thread_local std::vector<int> nodes;
  nodes.clear();
  for (int member : members) nodes.push_back(topology.node(member));
  std::sort(nodes.begin(), nodes.end());
  GroupSpan span;
  span.members = static_cast<int>(members.size());
  for (size_t i = 0; i < nodes.size();) {
    size_t end = i;
    while (end < nodes.size() && nodes[end] == nodes[i]) ++end;
    ++span.nodes;
    span.per_node = std::max(span.per_node, static_cast<int>(end - i));
    i = end;
  }
  return span;
}

double ring_seconds(CollectiveKind kind, double bytes, const GroupSpan& span, const ClusterTopology& topology) {
  if (kind == CollectiveKind::AllToAll) return kNever;
  if (span.nodes <= 1)
    return ring(kind, bytes, span.members, topology.device_link_bandwidth, topology.device_link_latency_s);
  double bandwidth = span.per_node * topology.network_bandwidth;
  if (span.per_node > 1) bandwidth = std::min(bandwidth, topology.device_link_bandwidth);
  return ring(kind, bytes, span.members, bandwidth, topology.network_latency_s);
}

double tree_seconds(CollectiveKind kind, double bytes, const GroupSpan& span, const ClusterTopology& topology) {
  if (kind != CollectiveKind::AllReduce || span.members <= 1) return kNever;
  const double chain_latency = (span.per_node - 1) * topology.device_link_latency_s;
  if (span.nodes <= 1) return 2 * bytes / topology.device_link_bandwidth + 2 * chain_latency;
  double bandwidth = span.per_node * topology.network_bandwidth;
  if (span.per_node > 1) bandwidth = std::min(bandwidth, topology.device_link_bandwidth);
  const double levels = std::ceil(std::log2(static_cast<double>(span.nodes)));
  return 2 * bytes / bandwidth + 2 * (levels * topology.network_latency_s + chain_latency);
}

double hierarchical_seconds(CollectiveKind kind, double bytes, const GroupSpan& span,
                            const ClusterTopology& topology) {
  if (kind == CollectiveKind::AllToAll || span.nodes <= 1 || span.per_node <= 1) return kNever;
  const int k = span.per_node;
  const double link = topology.device_link_bandwidth;
  const double link_latency = topology.device_link_latency_s;
  // Inside the node: one reduce-scatter (or all-gather) of the whole buffer.
  const double intra = ring(CollectiveKind::ReduceScatter, bytes, k, link, link_latency);
  // Across nodes: each member's 1/k of the buffer over its own NIC share.
  const double inter = ring(kind, bytes / k, span.nodes, topology.network_bandwidth, topology.network_latency_s);
  return (kind == CollectiveKind::AllReduce ? 2 * intra : intra) + inter;
}

double nvls_seconds(CollectiveKind kind, double bytes, const GroupSpan& span,
                    const ClusterTopology& topology) {
  if (kind != CollectiveKind::AllReduce || span.members <= 1 || span.nodes > 1 ||
      !(topology.nvls_algorithm_bandwidth > 0))
    return kNever;
  return bytes / topology.nvls_algorithm_bandwidth + 2 * topology.device_link_latency_s;
}

CollectiveEstimate fastest_collective(CollectiveKind kind, double bytes, const GroupSpan& span,
                                      const ClusterTopology& topology) {
  if (span.members <= 1) return {};
  if (kind == CollectiveKind::AllToAll) {
    // Each member sends (n-1)/n of its buffer: (n-k)/n to other nodes, (k-1)/n inside its own.
    const double n = span.members;
    const double k = span.nodes <= 1 ? n : span.per_node;
    const double local = (k - 1) / n * bytes / topology.device_link_bandwidth;
    const double remote = span.nodes <= 1 ? 0 : (n - k) / n * bytes / topology.network_bandwidth;
    const double latency = span.nodes <= 1 ? topology.device_link_latency_s : topology.network_latency_s;
    return {CollectiveAlgorithm::Direct, std::max(local, remote) + (n - 1) * latency};
  }
  CollectiveEstimate best{CollectiveAlgorithm::Ring, ring_seconds(kind, bytes, span, topology)};
  const double tree = tree_seconds(kind, bytes, span, topology);
  if (tree < best.seconds) best = {CollectiveAlgorithm::Tree, tree};
  const double hierarchical = hierarchical_seconds(kind, bytes, span, topology);
  if (hierarchical < best.seconds) best = {CollectiveAlgorithm::Hierarchical, hierarchical};
  const double nvls = nvls_seconds(kind, bytes, span, topology);
  if (nvls < best.seconds) best = {CollectiveAlgorithm::Nvls, nvls};
  return best;
}

double bus_bandwidth(CollectiveKind kind, double bytes, int members, double seconds) {
  if (members <= 1 || !(seconds > 0)) return 0;
  const double n = members;
  const double factor = kind == CollectiveKind::AllReduce ? 2 * (n - 1) / n : (n - 1) / n;
  return bytes / seconds * factor;
}

}  // namespace pipelab
