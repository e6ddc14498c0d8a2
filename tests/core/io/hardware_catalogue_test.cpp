// The hardware catalogue: the shipped files are sound and sourced, a user's
// file loads by path, and every mistake in one is refused with what to fix.
#include "core/io/hardware_catalogue.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <utility>
#include <vector>

#include "core/io/hardware_file_text.h"
#include "tests/core/io/io_test_support.h"

namespace pipelab {
namespace {

using testing::parse_error;
using testing::small_experiment_json;
using testing::TempFolder;

// The shipped h100 file's text with one JSON pointer replaced (or removed).
std::string h100_with(const std::string& pointer, const nlohmann::json* value) {
  std::ifstream file(std::string(PIPELAB_SOURCE_DIR) + "/hardware/devices/h100.json");
  nlohmann::json document = nlohmann::json::parse(file);
  const nlohmann::json::json_pointer at(pointer);
  if (value)
    document[at] = *value;
  else
    document[at.parent_pointer()].erase(at.back());
  return document.dump();
}

std::string dgx_h100_with(const std::string& pointer, const nlohmann::json& value) {
  std::ifstream file(std::string(PIPELAB_SOURCE_DIR) + "/hardware/nodes/dgx-h100.json");
  nlohmann::json document = nlohmann::json::parse(file);
  document[nlohmann::json::json_pointer(pointer)] = value;
  return document.dump();
}

template <typename Parse>
std::string error_of(Parse parse) {
  try {
    parse();
  } catch (const ExperimentError& error) {
    return error.what();
  }
  return "";
}

TEST(HardwareCatalogue, HoldsTheGpusEngineersAskFor) {
  const std::vector<std::string> devices = catalogue_device_ids();
  for (const char* id : {"cpu-core", "a100-40gb", "a100", "h100", "h200", "b200", "rtx-4090"})
    EXPECT_NE(std::find(devices.begin(), devices.end(), id), devices.end()) << id;
  const std::vector<std::string> nodes = catalogue_node_ids();
  for (const char* id : {"cpu-threads", "dgx-a100", "dgx-h100", "dgx-h200", "dgx-b200"})
    EXPECT_NE(std::find(nodes.begin(), nodes.end(), id), nodes.end()) << id;
}

TEST(HardwareCatalogue, EveryEntryIsNamedAfterItsFileSourcedAndSitsInANodeOfItsKind) {
  for (const std::string& id : catalogue_device_ids()) {
    SCOPED_TRACE(id);
    const DeviceSpec device = load_device_spec(id);
    EXPECT_EQ(device.id, id);
    for (const char* figure : {"memory", "peak_tflops", "achieved"})
      EXPECT_TRUE(device.sources.count(figure) && !device.sources.at(figure).empty()) << "no source for " << figure;
    const NodeSpec node = load_node_spec(device.node);
    EXPECT_EQ(node.device, id) << "its node " << device.node << " holds another device";
  }
  for (const std::string& id : catalogue_node_ids()) {
    SCOPED_TRACE(id);
    const NodeSpec node = load_node_spec(id);
    EXPECT_EQ(node.id, id);
    for (const char* figure : {"device_link", "host_link", "network", "host_memory"})
      EXPECT_TRUE(node.sources.count(figure) && !node.sources.at(figure).empty()) << "no source for " << figure;
    EXPECT_NO_THROW(load_device_spec(node.device));
  }
}

// The figures the simulator used before the catalogue (built into the code,
// each from the same datasheets) come out of the files within 1%: the
// sustained rates are now peak x achieved fraction.
TEST(HardwareCatalogue, TheEarlierProfilesKeepTheirFigures) {
  const DeviceProfile h100 = *find_device_profile("h100");
  EXPECT_NEAR(h100.flops_per_s, 50e12, 0.01 * 50e12);
  EXPECT_NEAR(h100.bf16_flops_per_s, 650e12, 0.01 * 650e12);
  EXPECT_NEAR(h100.memory_bandwidth, 3.0e12, 0.01 * 3.0e12);
  // NVLink 4's 450 GB/s at the 0.82 of it NCCL's collectives reach (since
  // 2026-11-30, measured: hardware/nodes/dgx-h100.json).
  EXPECT_DOUBLE_EQ(h100.link_bandwidth, 0.82 * 450e9);
  EXPECT_DOUBLE_EQ(h100.link_latency_s, 5e-6);
  EXPECT_DOUBLE_EQ(h100.host_link_bandwidth, 50e9);
  EXPECT_DOUBLE_EQ(h100.host_memory_bandwidth, 100e9);
  EXPECT_EQ(h100.memory_bytes, int64_t{80} * 1000 * 1000 * 1000);
  const DeviceProfile h200 = *find_device_profile("h200");
  EXPECT_NEAR(h200.memory_bandwidth, 4.3e12, 0.01 * 4.3e12);
  EXPECT_EQ(h200.memory_bytes, int64_t{141} * 1000 * 1000 * 1000);
  const DeviceProfile cpu = *find_device_profile("cpu-core");
  EXPECT_NEAR(cpu.flops_per_s, 50e9, 0.01 * 50e9);
  EXPECT_DOUBLE_EQ(cpu.bf16_flops_per_s, cpu.flops_per_s);  // no bf16 units: the FP32 rate
  EXPECT_NEAR(cpu.memory_bandwidth, 10e9, 0.01 * 10e9);
  EXPECT_DOUBLE_EQ(cpu.link_bandwidth, 5e9);
  EXPECT_DOUBLE_EQ(cpu.link_latency_s, 1e-6);
  EXPECT_EQ(cpu.memory_bytes, int64_t{8} << 30);
}

TEST(HardwareCatalogue, ANewerGpuIsFasterAndTheNetworkSlowerThanNvlink) {
  const DeviceProfile a100 = *find_device_profile("a100");
  const DeviceProfile h100 = *find_device_profile("h100");
  const DeviceProfile b200 = *find_device_profile("b200");
  EXPECT_LT(a100.bf16_flops_per_s, h100.bf16_flops_per_s);
  EXPECT_LT(h100.bf16_flops_per_s, b200.bf16_flops_per_s);
  EXPECT_LT(load_device_spec("a100-40gb").memory_bytes, load_device_spec("a100").memory_bytes);
  for (const std::string& id : {std::string("dgx-a100"), std::string("dgx-h100"), std::string("dgx-b200")}) {
    const NodeSpec node = load_node_spec(id);
    EXPECT_LT(node.network.node_bandwidth() / node.devices_per_node, node.device_link.bandwidth) << id;
  }
  // DGX A100: 8 x 200 Gb/s HDR = 200 GB/s per node.
  EXPECT_DOUBLE_EQ(load_node_spec("dgx-a100").network.node_bandwidth(), 200e9);
}

TEST(HardwareCatalogue, UnknownNamesListTheCatalogue) {
  const std::string message = error_of([] { load_device_spec("tpu-v5"); });
  EXPECT_MENTIONS(message, "'tpu-v5' is not a device of the hardware catalogue");
  EXPECT_MENTIONS(message, "h100");
  EXPECT_MENTIONS(message, "or the path of a .json file");
  EXPECT_FALSE(find_device_profile("tpu-v5").has_value());
  EXPECT_FALSE(find_device_profile("unit").has_value());
}

TEST(HardwareCatalogue, RefusesUnsoundDeviceFiles) {
  const nlohmann::json negative = -3350;
  EXPECT_MENTIONS(error_of([&] { parse_device_spec(h100_with("/memory_bandwidth_gb_s", &negative), "mine.json"); }),
                  "mine.json: device 'h100': memory_bandwidth_gb_s = -3350 must be a positive number");
  const nlohmann::json fp64 = 67;
  EXPECT_MENTIONS(error_of([&] { parse_device_spec(h100_with("/peak_tflops/fp64", &fp64), "mine.json"); }),
                  "unknown key 'peak_tflops.fp64'");
  const nlohmann::json too_much = 1.5;
  EXPECT_MENTIONS(
      error_of([&] { parse_device_spec(h100_with("/achieved/gemm_fraction/bf16", &too_much), "mine.json"); }),
      "achieved.gemm_fraction.bf16 = 1.5 must be a fraction in (0, 1]");
  EXPECT_MENTIONS(error_of([&] { parse_device_spec(h100_with("/achieved/gemm_fraction/bf16", nullptr), "m"); }),
                  "achieved.gemm_fraction has no bf16, which peak_tflops has");
  EXPECT_MENTIONS(error_of([&] { parse_device_spec(h100_with("/memory_gb", nullptr), "m"); }),
                  "memory_gb is missing; give its memory in GB");
  const nlohmann::json text = "fast";
  EXPECT_MENTIONS(error_of([&] { parse_device_spec(h100_with("/memory_gb", &text), "m"); }), "memory_gb");
  EXPECT_MENTIONS(error_of([] { parse_device_spec("{\"device\": ", "m"); }), "not valid JSON");
  const nlohmann::json negative_units = -132;
  EXPECT_MENTIONS(
      error_of([&] { parse_device_spec(h100_with("/compute_units", &negative_units), "m"); }),
      "compute_units = -132 must be >= 0 (the GPU's streaming multiprocessors");
  const nlohmann::json fractional_units = 13.5;
  EXPECT_MENTIONS(
      error_of([&] { parse_device_spec(h100_with("/compute_units", &fractional_units), "m"); }),
      "compute_units");
  // Without compute units every GEMM runs at one rate, whatever its shape.
  EXPECT_EQ(parse_device_spec(h100_with("/compute_units", nullptr), "m").compute_units, 0);
  EXPECT_EQ(find_device_profile("h100")->compute_units, 132);
  const nlohmann::json negative_overhead = -2;
  EXPECT_MENTIONS(error_of([&] {
                    parse_device_spec(h100_with("/achieved/op_overhead_us", &negative_overhead),
                                      "m");
                  }),
                  "achieved.op_overhead_us = -2 must be >= 0");
}

TEST(HardwareCatalogue, RefusesUnsoundNodeFiles) {
  EXPECT_MENTIONS(error_of([] { parse_node_spec(dgx_h100_with("/network/nic_bandwidth_gbit_s", 0), "n.json"); }),
                  "network.nic_bandwidth_gbit_s = 0 must be a positive number");
  EXPECT_MENTIONS(error_of([] { parse_node_spec(dgx_h100_with("/devices_per_node", 16), "n.json"); }),
                  "device_link connects 8 devices but the node holds 16; lower devices_per_node or raise "
                  "device_link.devices_connected");
  EXPECT_MENTIONS(error_of([] { parse_node_spec(dgx_h100_with("/network/nics", 0), "n.json"); }),
                  "network.nics = 0 must be at least 1");
  EXPECT_MENTIONS(error_of([] { parse_node_spec(dgx_h100_with("/device_link/speed", 1), "n.json"); }),
                  "unknown key 'device_link.speed'");
  EXPECT_MENTIONS(error_of([] {
                    parse_node_spec(dgx_h100_with("/device_link/achieved_fraction", 1.2), "n.json");
                  }),
                  "device_link.achieved_fraction = 1.2 must be a fraction in (0, 1]");
  EXPECT_MENTIONS(
      error_of([] { parse_node_spec(dgx_h100_with("/network/achieved_fraction", 0), "n.json"); }),
      "network.achieved_fraction = 0 must be a fraction in (0, 1]");
}

// A link's achieved fraction (nccl-tests' bus bandwidth over the datasheet's)
// is what transfers and collectives run at; absent, the datasheet figure.
TEST(HardwareCatalogue, ALinkRunsAtItsAchievedBandwidth) {
  const NodeSpec measured =
      parse_node_spec(dgx_h100_with("/device_link/achieved_fraction", 0.8), "n.json");
  EXPECT_DOUBLE_EQ(measured.device_link.achieved_bandwidth(), 0.8 * 450e9);
  EXPECT_DOUBLE_EQ(device_profile(load_device_spec("h100"), measured).link_bandwidth, 0.8 * 450e9);
  const NodeSpec plain =
      parse_node_spec(dgx_h100_with("/network/achieved_fraction", 0.5), "n.json");
  EXPECT_DOUBLE_EQ(plain.device_link.achieved_bandwidth(), 0.82 * 450e9);
  EXPECT_DOUBLE_EQ(plain.network.achieved_node_bandwidth(), 0.5 * 8 * 50e9);
  // The DGX A100's NVLink: 200 of 300 GB/s measured by nccl-tests.
  EXPECT_DOUBLE_EQ(load_node_spec("dgx-a100").device_link.achieved_bandwidth(), 0.67 * 300e9);
  // NVLink SHARP: the H100 and H200 nodes' switches reduce, the A100's do not.
  EXPECT_DOUBLE_EQ(load_node_spec("dgx-h100").device_link.nvls_algorithm_bandwidth, 273e9);
  EXPECT_DOUBLE_EQ(load_node_spec("dgx-h200").device_link.nvls_algorithm_bandwidth, 271e9);
  EXPECT_EQ(load_node_spec("dgx-a100").device_link.nvls_algorithm_bandwidth, 0);
  EXPECT_MENTIONS(error_of([] {
                    parse_node_spec(dgx_h100_with("/device_link/nvls_algbw_gb_s", -1), "n.json");
                  }),
                  "device_link.nvls_algbw_gb_s = -1 must be >= 0");
  EXPECT_DOUBLE_EQ(parse_node_spec(node_spec_text(load_node_spec("dgx-h100")), "again.json")
                       .device_link.nvls_algorithm_bandwidth,
                   273e9);
  // A node file written out reads back with its fractions.
  const NodeSpec again = parse_node_spec(node_spec_text(measured), "again.json");
  EXPECT_DOUBLE_EQ(again.device_link.achieved_fraction, 0.8);
}

// What the software holds on each device (the CUDA context, cuBLAS's
// workspace, NCCL's buffers) comes from the files: sized, sourced, refused
// when negative, written back, and absent on a CPU.
TEST(HardwareCatalogue, RuntimeMemoryComesFromTheDeviceAndNodeFiles) {
  constexpr double kMiB = 1024.0 * 1024.0;
  const DeviceProfile h100 = device_profile(load_device_spec("h100"), load_node_spec("dgx-h100"));
  EXPECT_EQ(h100.runtime_bytes, int64_t{(400 + 32) << 20});
  EXPECT_EQ(h100.collective_group_bytes, int64_t{688} << 20);
  EXPECT_EQ(h100.all_to_all_peer_bytes, int64_t{469} << 20);
  EXPECT_TRUE(load_device_spec("h100").sources.count("runtime_memory"));
  EXPECT_TRUE(load_node_spec("dgx-h100").sources.count("communicator_memory"));
  // Ampere's cuBLAS workspace is PyTorch's smaller default.
  EXPECT_DOUBLE_EQ(load_device_spec("a100").gemm_workspace_bytes, 8.125 * kMiB);
  const DeviceProfile cpu = *find_device_profile("cpu-core");
  EXPECT_EQ(cpu.runtime_bytes + cpu.collective_group_bytes + cpu.all_to_all_peer_bytes, 0);

  const nlohmann::json negative = -1;
  EXPECT_MENTIONS(error_of([&] {
                    parse_device_spec(h100_with("/runtime_memory_mib/context", &negative), "m");
                  }),
                  "runtime_memory_mib.context = -1 must be >= 0 and at most 1073741824 (MiB");
  const nlohmann::json huge = 1e300;
  EXPECT_MENTIONS(error_of([&] {
                    parse_device_spec(h100_with("/runtime_memory_mib/gemm_workspace", &huge), "m");
                  }),
                  "runtime_memory_mib.gemm_workspace");
  EXPECT_MENTIONS(
      error_of([] {
        parse_node_spec(dgx_h100_with("/communicator_memory_mib/per_group", -5), "n.json");
      }),
      "communicator_memory_mib.per_group = -5 must be >= 0 and at most 1073741824 (MiB");
  EXPECT_MENTIONS(
      error_of(
          [] { parse_node_spec(dgx_h100_with("/communicator_memory_mib/per_rank", 5), "n.json"); }),
      "unknown key 'communicator_memory_mib.per_rank'");
  // Absent: none held.
  EXPECT_EQ(parse_device_spec(h100_with("/runtime_memory_mib", nullptr), "m").context_bytes, 0);
  // Written out, read back.
  const DeviceSpec device =
      parse_device_spec(device_spec_text(load_device_spec("h100")), "again.json");
  EXPECT_DOUBLE_EQ(device.context_bytes, 400 * kMiB);
  EXPECT_DOUBLE_EQ(device.gemm_workspace_bytes, 32 * kMiB);
  const NodeSpec node = parse_node_spec(node_spec_text(load_node_spec("dgx-h100")), "again.json");
  EXPECT_DOUBLE_EQ(node.collective_group_bytes, 688 * kMiB);
  EXPECT_DOUBLE_EQ(node.all_to_all_peer_bytes, 469 * kMiB);
}

TEST(HardwareCatalogue, AUsersFilesLoadByPathBesideTheExperiment) {
  TempFolder folder;
  const nlohmann::json my_node = "my-node.json";
  {
    std::ofstream(folder.path() / "my-gpu.json") << h100_with("/node", &my_node);
    std::ofstream(folder.path() / "my-node.json") << dgx_h100_with("/devices_per_node", 4);
  }
  auto document = small_experiment_json();
  document["simulation"] = {{"profile", "my-gpu.json"}};
  {
    std::ofstream(folder.path() / "experiment.json") << document.dump();
  }
  const Experiment experiment = load_experiment((folder.path() / "experiment.json").string());
  const ClusterSpec cluster = experiment_cluster(experiment);
  EXPECT_EQ(cluster.device.id, "h100");
  EXPECT_EQ(cluster.node.devices_per_node, 4);
  EXPECT_EQ(cluster.nodes, 1);  // pp 2 fills one node of 4

  document["simulation"] = {{"profile", "missing-gpu.json"}};
  EXPECT_MENTIONS(parse_error(document.dump()), "simulation.profile: hardware file not found");
}

TEST(HardwareCatalogue, AClusterMustHoldTheRunAndItsDevices) {
  auto document = small_experiment_json();
  document["parallel"]["dp"] = 8;
  document["training"]["batch_size"] = 256;
  document["simulation"] = {{"profile", "h100"}, {"cluster", {{"node", "dgx-h100"}, {"nodes", 1}}}};
  EXPECT_MENTIONS(parse_error(document.dump()),
                  "simulation.cluster has 1 node x 8 devices = 8 but the run needs 16 (dp x tp x cp x pp); raise "
                  "simulation.cluster.nodes to 2");
  document["simulation"]["cluster"]["nodes"] = 0;  // as many as needed
  EXPECT_EQ(parse_error(document.dump()), "");
  EXPECT_EQ(experiment_cluster(parse_experiment(document.dump())).nodes, 2);

  document["simulation"]["cluster"]["node"] = "dgx-a100";
  EXPECT_MENTIONS(parse_error(document.dump()),
                  "simulation.cluster.node 'dgx-a100' holds 'a100' devices but simulation.profile is 'h100'");
  document["simulation"] = {{"profile", "unit"}, {"cluster", {{"node", "dgx-h100"}}}};
  EXPECT_MENTIONS(parse_error(document.dump()), "simulation.cluster needs a device");
  document["simulation"] = {{"profile", "h100"}, {"cluster", {{"nodes", -1}}}};
  EXPECT_MENTIONS(parse_error(document.dump()), "simulation.cluster.nodes = -1 must be >= 0");
}

TEST(HardwareCatalogue, AClusterSurvivesSavingAndLoading) {
  auto document = small_experiment_json();
  document["simulation"] = {{"profile", "a100"}, {"cluster", {{"node", "dgx-a100"}, {"nodes", 3}}}};
  const Experiment experiment = parse_experiment(document.dump());
  const Experiment again = parse_experiment(experiment_to_json(experiment));
  EXPECT_EQ(again.simulation.cluster.node, "dgx-a100");
  EXPECT_EQ(again.simulation.cluster.nodes, 3);
  // Saved with its cluster even when none was chosen, so --set can reach it.
  Experiment plain = parse_experiment(small_experiment_json().dump());
  apply_override(plain, "simulation.cluster.nodes=2");
  EXPECT_EQ(plain.simulation.cluster.nodes, 2);
}

// The catalogue's sustained GEMM rates against GEMMs measured on an H200
// (hardware/measurements/h200-gemm-shapes.json): its large ones (at least
// 0.5 ms, so an isolated launch's cost is under 10% of each) run within 10%
// of the h200 profile's rate, bf16 and float32. The rates are the datasheet
// peaks times assumed fractions; this holds the assumption to a measurement.
TEST(HardwareCatalogue, H200GemmRatesAgreeWithLargeGemmsMeasuredOnOne) {
  std::ifstream file(std::string(PIPELAB_SOURCE_DIR) +
                     "/hardware/measurements/h200-gemm-shapes.json");
  ASSERT_TRUE(file) << "hardware/measurements/h200-gemm-shapes.json is missing";
  const nlohmann::json measured = nlohmann::json::parse(file);
  const DeviceProfile h200 = *find_device_profile("h200");
  for (const auto& [dtype, rate] : {std::pair<std::string, double>{"bf16", h200.bf16_flops_per_s},
                                    std::pair<std::string, double>{"fp32", h200.flops_per_s}}) {
    std::vector<double> large;
    for (const nlohmann::json& row : measured.at("rows"))
      if (row.at("dtype") == dtype && row.at("median_ms").get<double>() >= 0.5)
        large.push_back(row.at("tflops").get<double>() * 1e12);
    ASSERT_GE(large.size(), 10u) << dtype;
    std::sort(large.begin(), large.end());
    const double median = large[large.size() / 2];
    EXPECT_NEAR(rate / median, 1.0, 0.10)
        << dtype << ": profile " << rate / 1e12 << " TFLOP/s, measured median " << median / 1e12;
  }
}

}  // namespace
}  // namespace pipelab
