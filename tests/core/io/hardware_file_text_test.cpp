// Hardware files written by PipeLab (calibrate --write) read back as they
// were: every catalogue entry survives writing and parsing, and a saved pair
// of device and node files is what an experiment's simulation.profile loads.
#include "core/io/hardware_file_text.h"

#include <gtest/gtest.h>

#include "core/io/experiment_io.h"
#include "core/io/hardware_catalogue.h"
#include "tests/core/io/io_test_support.h"

namespace pipelab {
namespace {

using testing::TempFolder;

TEST(HardwareFileText, EveryCatalogueEntrySurvivesWritingAndParsing) {
  for (const std::string& id : catalogue_device_ids()) {
    const DeviceSpec device = load_device_spec(id);
    const std::string text = device_spec_text(device);
    EXPECT_EQ(device_spec_text(parse_device_spec(text, id)), text) << id;
    EXPECT_EQ(parse_device_spec(text, id).peak_flops, device.peak_flops) << id;
  }
  for (const std::string& id : catalogue_node_ids()) {
    const NodeSpec node = load_node_spec(id);
    const std::string text = node_spec_text(node);
    EXPECT_EQ(node_spec_text(parse_node_spec(text, id)), text) << id;
    EXPECT_EQ(parse_node_spec(text, id).devices_per_node, node.devices_per_node) << id;
  }
}

TEST(HardwareFileText, ASavedDeviceNamesItsNodeBesideIt) {
  TempFolder folder;
  ClusterSpec cluster;
  cluster.device = load_device_spec("cpu-core");
  cluster.node = load_node_spec("cpu-threads");
  cluster.device.op_overhead_s = 25e-6;
  cluster.node.device_link.latency_s = 120e-6;
  const std::string device_path = (folder.path() / "this-cpu.json").string();
  const std::string node_path = save_hardware_files(cluster, device_path);
  EXPECT_EQ(node_path, (folder.path() / "this-cpu-node.json").string());

  Experiment experiment = default_experiment();
  experiment.simulation.profile = device_path;
  const ClusterSpec loaded = experiment_cluster(experiment);
  EXPECT_EQ(loaded.device.id, "this-cpu");
  EXPECT_EQ(loaded.node.id, "this-cpu-node");
  EXPECT_EQ(loaded.node.device, "this-cpu");
  EXPECT_DOUBLE_EQ(loaded.device.op_overhead_s, 25e-6);
  EXPECT_DOUBLE_EQ(loaded.node.device_link.latency_s, 120e-6);

  EXPECT_THROW(save_hardware_files(cluster, (folder.path() / "this-cpu.txt").string()),
               ExperimentError);
  EXPECT_THROW(save_hardware_files(cluster, (folder.path() / "no-such-folder" / "x.json").string()),
               ExperimentError);
}

}  // namespace
}  // namespace pipelab
