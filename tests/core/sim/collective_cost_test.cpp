// Placement and collectives on a cluster: which devices share a node, what a
// message or a collective costs inside a node and across the network, and
// which algorithm wins at which size.
#include "core/sim/collective_cost.h"

#include <gtest/gtest.h>

#include <limits>

#include "core/io/hardware_catalogue.h"
#include "core/sim/cost_model.h"

namespace pipelab {
namespace {

// dgx-h100: 8 GPUs, NVLink 450 GB/s of which NCCL's collectives reach 0.82,
// and 5 us; NVLink SHARP all-reduces at 273 GB/s of buffer; 8 x 400 Gb/s NICs
// (50 GB/s per GPU), 10 us.
constexpr double kNvlink = 0.82 * 450e9;

ClusterTopology dgx_h100(int dp, int tp, int pp) {
  return place_devices(DeviceLayout{dp, tp, pp}, load_node_spec("dgx-h100"));
}

TEST(Placement, FollowsMegatronRankOrderTensorParallelInnermostPipelineOutermost) {
  const DeviceLayout layout{2, 2, 2};  // dp 2, tp 2, pp 2
  // device = (replica * pp + pipeline_rank) * tp + shard; rank = (pipeline_rank * dp + replica) * tp + shard
  EXPECT_EQ(megatron_rank(layout, layout.device_of(0, 0, 1)), 1);
  EXPECT_EQ(megatron_rank(layout, layout.device_of(1, 0, 0)), 2);
  EXPECT_EQ(megatron_rank(layout, layout.device_of(0, 1, 0)), 4);
  EXPECT_EQ(megatron_rank(layout, layout.device_of(1, 1, 1)), 7);

  // tp 8 x dp 2 x pp 2 on 8-GPU nodes: each tensor-parallel group fills one
  // node, the two replicas of a stage sit on two nodes, the stages on others.
  const DeviceLayout big{2, 8, 2};
  const ClusterTopology topology = place_devices(big, load_node_spec("dgx-h100"));
  for (int shard = 1; shard < 8; ++shard)
    EXPECT_TRUE(topology.same_node(big.device_of(1, 1, 0), big.device_of(1, 1, shard)));
  EXPECT_FALSE(topology.same_node(big.device_of(0, 0, 0), big.device_of(1, 0, 0)));
  EXPECT_FALSE(topology.same_node(big.device_of(0, 0, 0), big.device_of(0, 1, 0)));
  EXPECT_EQ(topology.node(big.device_of(1, 1, 7)), 3);
}

TEST(Placement, SaysWhichGroupsCrossTheNetwork) {
  const DeviceLayout tp8_pp2{2, 8, 2};
  const PlacementSummary wide = summarize_placement(tp8_pp2, place_devices(tp8_pp2, load_node_spec("dgx-h100")));
  EXPECT_EQ(wide.nodes_used, 4);
  EXPECT_FALSE(wide.tensor_parallel_crosses);
  EXPECT_TRUE(wide.data_parallel_crosses);
  EXPECT_TRUE(wide.pipeline_crosses);
  // tp 4 x dp 2 fills one node per pipeline rank: only the pipeline crosses.
  const DeviceLayout tp4_dp2{2, 4, 2};
  const PlacementSummary narrow =
      summarize_placement(tp4_dp2, place_devices(tp4_dp2, load_node_spec("dgx-h100")));
  EXPECT_EQ(narrow.nodes_used, 2);
  EXPECT_FALSE(narrow.tensor_parallel_crosses);
  EXPECT_FALSE(narrow.data_parallel_crosses);
  EXPECT_TRUE(narrow.pipeline_crosses);
  // tp 16 cannot fit an 8-GPU node.
  const DeviceLayout tp16{1, 16, 1};
  EXPECT_TRUE(summarize_placement(tp16, place_devices(tp16, load_node_spec("dgx-h100"))).tensor_parallel_crosses);
}

TEST(CollectiveCost, AnAllReduceAcrossTwoNodesCostsWhatTheNetworkAllows) {
  const ClusterTopology topology = dgx_h100(2, 8, 1);
  const double bytes = 1e9;
  // Two replicas' shard 0: one GPU on each node, each with its own 50 GB/s NIC.
  const GroupSpan across = group_span(topology, {0, 8});
  EXPECT_EQ(across.nodes, 2);
  EXPECT_EQ(across.per_node, 1);
  const CollectiveEstimate network = fastest_collective(CollectiveKind::AllReduce, bytes, across, topology);
  EXPECT_NEAR(network.seconds, 2 * 0.5 * bytes / 50e9 + 2 * 10e-6, 1e-9);
  // The same two GPUs inside one node would use NVLink: 7x faster (a ring of
  // two beats NVLink SHARP, which pays for the whole buffer).
  const CollectiveEstimate nvlink =
      fastest_collective(CollectiveKind::AllReduce, bytes, group_span(topology, {0, 1}), topology);
  EXPECT_EQ(nvlink.algorithm, CollectiveAlgorithm::Ring);
  EXPECT_NEAR(nvlink.seconds, 2 * 0.5 * bytes / kNvlink + 2 * 5e-6, 1e-9);
  EXPECT_GT(network.seconds / nvlink.seconds, 7);
}

TEST(CollectiveCost, InsideANodeTheRingFormulaIsTheOneBeforeTheCluster) {
  const ClusterTopology topology = dgx_h100(1, 8, 1);
  const GroupSpan node = group_span(topology, {0, 1, 2, 3, 4, 5, 6, 7});
  for (double bytes : {1e3, 1e6, 1e9})
    EXPECT_NEAR(ring_seconds(CollectiveKind::AllReduce, bytes, node, topology),
                2.0 * 7 / 8 * bytes / kNvlink + 14 * 5e-6, 1e-12);
  const CollectiveEstimate gather = fastest_collective(CollectiveKind::AllGather, 1e9, node, topology);
  EXPECT_EQ(gather.algorithm, CollectiveAlgorithm::Ring);
  EXPECT_NEAR(gather.seconds, 7.0 / 8 * 1e9 / kNvlink + 7 * 5e-6, 1e-12);
}

// NVLink SHARP (the H100 node's switches reduce): an all-reduce of the whole
// node takes the buffer once at the measured 273 GB/s, which nccl-tests
// reports as about 480 GB/s of bus bandwidth (NVIDIA/nccl issue 1455); a node
// without it (DGX A100) keeps the ring, and a group across nodes cannot use it.
TEST(CollectiveCost, NvlinkSharpAllReducesAWholeNodeAtItsMeasuredBandwidth) {
  const ClusterTopology topology = dgx_h100(1, 8, 1);
  const GroupSpan node = group_span(topology, {0, 1, 2, 3, 4, 5, 6, 7});
  const CollectiveEstimate large =
      fastest_collective(CollectiveKind::AllReduce, 4e9, node, topology);
  EXPECT_EQ(large.algorithm, CollectiveAlgorithm::Nvls);
  EXPECT_NEAR(large.seconds, 4e9 / 273e9 + 2 * 5e-6, 1e-12);
  EXPECT_NEAR(bus_bandwidth(CollectiveKind::AllReduce, 4e9, 8, large.seconds), 480e9, 0.01 * 480e9);
  EXPECT_LT(large.seconds, ring_seconds(CollectiveKind::AllReduce, 4e9, node, topology));
  // Only all-reduce: the gathers and scatters run on rings.
  EXPECT_EQ(nvls_seconds(CollectiveKind::ReduceScatter, 4e9, node, topology),
            std::numeric_limits<double>::infinity());
  const ClusterTopology a100 = place_devices(DeviceLayout{1, 8, 1}, load_node_spec("dgx-a100"));
  EXPECT_EQ(fastest_collective(CollectiveKind::AllReduce, 4e9,
                               group_span(a100, {0, 1, 2, 3, 4, 5, 6, 7}), a100)
                .algorithm,
            CollectiveAlgorithm::Ring);
  const ClusterTopology two_nodes = dgx_h100(2, 8, 1);
  EXPECT_EQ(nvls_seconds(CollectiveKind::AllReduce, 4e9, group_span(two_nodes, {0, 8}), two_nodes),
            std::numeric_limits<double>::infinity());
}

// On a DGX A100 the NVLink runs at the bus bandwidth nccl-tests measures
// (0.67 of 300 GB/s): an 8-GPU all-reduce's busbw is that figure, as the
// nccl-tests convention reports it, not the datasheet's.
TEST(CollectiveCost, ALinkWithAMeasuredFractionRunsAtIt) {
  const ClusterTopology topology = place_devices(DeviceLayout{1, 8, 1}, load_node_spec("dgx-a100"));
  const GroupSpan node = group_span(topology, {0, 1, 2, 3, 4, 5, 6, 7});
  const CollectiveEstimate estimate =
      fastest_collective(CollectiveKind::AllReduce, 4e9, node, topology);
  EXPECT_NEAR(bus_bandwidth(CollectiveKind::AllReduce, 4e9, 8, estimate.seconds), 0.67 * 300e9,
              0.005 * 300e9);
}

TEST(CollectiveCost, TreeWinsSmallMessagesOnManyNodesAndRingWinsLargeOnes) {
  // 64 replicas at tp 8: each all-reduce group is one GPU on each of 64 nodes.
  const ClusterTopology topology = dgx_h100(64, 8, 1);
  std::vector<int> replicas;
  for (int replica = 0; replica < 64; ++replica) replicas.push_back(replica * 8);
  const GroupSpan span = group_span(topology, replicas);
  EXPECT_EQ(span.nodes, 64);

  const CollectiveEstimate small = fastest_collective(CollectiveKind::AllReduce, 64e3, span, topology);
  EXPECT_EQ(small.algorithm, CollectiveAlgorithm::Tree);
  EXPECT_LT(small.seconds, ring_seconds(CollectiveKind::AllReduce, 64e3, span, topology) / 5);
  const CollectiveEstimate large = fastest_collective(CollectiveKind::AllReduce, 4e9, span, topology);
  EXPECT_EQ(large.algorithm, CollectiveAlgorithm::Ring);
  // The ring's bus bandwidth approaches the GPU's NIC share.
  EXPECT_NEAR(bus_bandwidth(CollectiveKind::AllReduce, 4e9, 64, large.seconds), 50e9, 0.01 * 50e9);
}

TEST(CollectiveCost, AGroupOfWholeNodesUsesEveryNicAndHierarchyCutsLatency) {
  // Data parallel over 4 whole nodes (tp 1, dp 32): 8 members per node.
  const ClusterTopology topology = dgx_h100(32, 1, 1);
  std::vector<int> all(32);
  for (int device = 0; device < 32; ++device) all[device] = device;
  const GroupSpan span = group_span(topology, all);
  EXPECT_EQ(span.nodes, 4);
  EXPECT_EQ(span.per_node, 8);
  // Large buffers: bandwidth-bound at the node's 8 NICs (400 GB/s), not one NIC.
  const double bytes = 8e9;
  const CollectiveEstimate large = fastest_collective(CollectiveKind::AllReduce, bytes, span, topology);
  EXPECT_GT(bus_bandwidth(CollectiveKind::AllReduce, bytes, 32, large.seconds), 300e9);
  // Small buffers: the hierarchy's 2 x 3 network steps beat the flat ring's 62.
  const double hierarchical = hierarchical_seconds(CollectiveKind::AllReduce, 1e5, span, topology);
  EXPECT_LT(hierarchical, ring_seconds(CollectiveKind::AllReduce, 1e5, span, topology));
  EXPECT_LE(fastest_collective(CollectiveKind::AllReduce, 1e5, span, topology).seconds, hierarchical);
}

TEST(CollectiveCost, AnAllToAllSendsTheOtherNodesShareOverTheNetwork) {
  const ClusterTopology topology = dgx_h100(16, 1, 1);
  std::vector<int> all(16);
  for (int device = 0; device < 16; ++device) all[device] = device;
  const double bytes = 1.6e9;
  const CollectiveEstimate estimate =
      fastest_collective(CollectiveKind::AllToAll, bytes, group_span(topology, all), topology);
  // Half of each member's buffer goes to the other node over its 50 GB/s NIC share.
  EXPECT_NEAR(estimate.seconds, 8.0 / 16 * bytes / 50e9 + 15 * 10e-6, 1e-9);
}

// Two stages of 1 GFLOP on an H100, and a pipeline message from device 0 to device 8.
CostModel two_h100_stages() {
  StageProfile stage;
  stage.forward_flops = 1e9;
  return CostModel::from_profiles({stage, stage}, *find_device_profile("h100"), 2);
}

Op send_to_device_8(int64_t bytes) {
  Op send;
  send.kind = OpKind::SendActivation;
  send.device = 0;
  send.peer = 8;
  send.bytes = bytes;
  return send;
}

TEST(CollectiveCost, TheCostModelPricesMessagesAndCollectivesOnItsCluster) {
  CostModel cost = two_h100_stages();
  Op all_reduce;
  all_reduce.kind = OpKind::AllReduce;
  all_reduce.bytes = 1'000'000'000;
  Op send = send_to_device_8(100'000'000);
  // Without a cluster every pair of devices talks over NVLink.
  const double flat = cost.collective_duration(all_reduce, std::vector<int>{0, 8});
  EXPECT_DOUBLE_EQ(flat, cost.collective_duration(all_reduce, 2));
  const double flat_send = cost.duration(send);

  cost.set_topology(dgx_h100(1, 8, 2));  // pp 2 at tp 8: one node per stage
  EXPECT_NEAR(cost.collective_duration(all_reduce, std::vector<int>{0, 8}) / flat, kNvlink / 50e9,
              0.1);
  EXPECT_NEAR(cost.duration(send), 10e-6 + 0.1e9 / 50e9, 1e-12);
  EXPECT_GT(cost.duration(send), 7 * flat_send);
  send.peer = 1;  // the next GPU of the same node
  EXPECT_DOUBLE_EQ(cost.duration(send), flat_send);
}

// Megatron-LM's scatter/gather: at tp 8 without sequence parallelism every
// shard holds the whole activation, so it sends only its eighth over its own
// NIC share and the receiving node gathers the eighths over NVLink. With
// sequence parallelism the shard's message is already its slice and goes as it is.
TEST(CollectiveCost, PipelineMessagesBetweenNodesGoAsTensorParallelSlices) {
  CostModel cost = two_h100_stages();
  const Op send = send_to_device_8(800'000'000);
  const DeviceLayout tp8_pp2{1, 8, 2};
  cost.set_topology(
      place_devices(tp8_pp2, load_node_spec("dgx-h100"), /*sequence_parallel=*/false));
  EXPECT_EQ(cost.topology()->pipeline_message_slices, 8);
  EXPECT_NEAR(cost.duration(send), 10e-6 + 0.1e9 / 50e9 + 7.0 / 8 * 0.8e9 / kNvlink + 7 * 5e-6,
              1e-12);
  cost.set_topology(place_devices(tp8_pp2, load_node_spec("dgx-h100"), /*sequence_parallel=*/true));
  EXPECT_NEAR(cost.duration(send), 10e-6 + 0.8e9 / 50e9, 1e-12);
  // A tensor-parallel group wider than a node cannot gather inside one.
  EXPECT_EQ(place_devices(DeviceLayout{1, 16, 2}, load_node_spec("dgx-h100"), false)
                .pipeline_message_slices,
            1);
}

}  // namespace
}  // namespace pipelab
