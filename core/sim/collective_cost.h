// How long one collective takes on a cluster's links, by algorithm, as NCCL
// runs them; the cost model uses the fastest, as NCCL's tuner picks one per
// message size.
//
// With n members on N nodes, k of them per node (Megatron placement puts the
// same number on each), S the buffer's bytes (nccl-tests' "size": the whole
// buffer for all-reduce, reduce-scatter and all-gather, one member's send
// buffer for all-to-all), a the per-message latency and B the bandwidth:
//  - ring: all-reduce 2(n-1)/n S/B + 2(n-1) a; reduce-scatter and all-gather
//    half of it. Inside a node B and a are the device link's. Across nodes
//    every step waits for the network (a = its latency) and B is the least of
//    the device link and k NIC shares (NCCL runs one ring per NIC, so the k
//    members of a node use k NICs at once).
//  - tree (all-reduce only): the data goes up and down a tree, 2 S/B, in
//    2 (log2 N a_network + (k-1) a_link): a double binary tree across nodes,
//    a chain inside each. Slower than the ring for large buffers (no (n-1)/n),
//    faster for small ones on many nodes (log N latencies, not n).
//  - hierarchical (groups across nodes with k > 1): reduce-scatter inside the
//    node, the collective across nodes on S/k per member over its own NIC
//    share, all-gather inside the node.
//  - NVLS (all-reduce inside a node whose switches reduce, NVLink SHARP):
//    each member sends its buffer to the switch once and gets the sum back,
//    S / B_nvls + 2 a, where B_nvls is the measured algorithm bandwidth
//    (about the same for any group of the node: NVIDIA/nccl issue 1455).
//  - all-to-all: every member sends S (n-1)/n; the part for other nodes over
//    its NIC share, the rest over the device link, at the same time.
#pragma once

#include <string>
#include <vector>

#include "core/sim/cluster_topology.h"

namespace pipelab {

enum class CollectiveKind { AllReduce, ReduceScatter, AllGather, AllToAll };
enum class CollectiveAlgorithm { Ring, Tree, Hierarchical, Direct, Nvls };
const char* collective_algorithm_name(CollectiveAlgorithm algorithm);

// A group as it lies on the cluster.
struct GroupSpan {
  int members = 0;
  int nodes = 0;     // how many nodes hold at least one member
  int per_node = 0;  // the most members on one node
};
GroupSpan group_span(const ClusterTopology& topology, const std::vector<int>& members);

struct CollectiveEstimate {
  CollectiveAlgorithm algorithm = CollectiveAlgorithm::Ring;
  double seconds = 0;
};

// Each algorithm's time; +infinity where it does not apply.
double ring_seconds(CollectiveKind kind, double bytes, const GroupSpan& span, const ClusterTopology& topology);
double tree_seconds(CollectiveKind kind, double bytes, const GroupSpan& span, const ClusterTopology& topology);
double hierarchical_seconds(CollectiveKind kind, double bytes, const GroupSpan& span,
                            const ClusterTopology& topology);
double nvls_seconds(CollectiveKind kind, double bytes, const GroupSpan& span,
                    const ClusterTopology& topology);
// The fastest of them (all-to-all has one way). 0 seconds for a group of one.
CollectiveEstimate fastest_collective(CollectiveKind kind, double bytes, const GroupSpan& span,
                                      const ClusterTopology& topology);

// nccl-tests' bus bandwidth of a measured (or predicted) time, so a user can
// hold a prediction against their own nccl-tests figures: bytes / seconds
// times 2(n-1)/n for all-reduce, (n-1)/n for the others.
double bus_bandwidth(CollectiveKind kind, double bytes, int members, double seconds);

}  // namespace pipelab
