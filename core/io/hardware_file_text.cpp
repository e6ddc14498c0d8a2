#include "core/io/hardware_file_text.h"

#include <filesystem>

#include "core/io/experiment_io.h"
#include "core/io/file_text.h"
#include "core/io/json_format.h"
#include "core/text/quoted_excerpt.h"

namespace pipelab {
namespace {

constexpr double kGiga = 1e9;
constexpr double kTera = 1e12;
constexpr double kMicro = 1e-6;
constexpr double kMebibyte = 1024.0 * 1024.0;

Json per_precision(const std::map<std::string, double>& numbers, double scale) {
  Json object = Json::object();
  for (const std::string& precision : peak_precision_names())
    if (const auto found = numbers.find(precision); found != numbers.end())
      object[precision] = found->second / scale;
  return object;
}

Json sources_json(const std::map<std::string, std::string>& sources) {
  Json object = Json::object();
  for (const auto& [figure, source] : sources) object[figure] = source;
  return object;
}

}  // namespace

std::string device_spec_text(const DeviceSpec& device) {
  Json json;
  json["device"] = device.id;
  json["name"] = device.name;
  json["memory_gb"] = device.memory_bytes / kGiga;
  json["memory_bandwidth_gb_s"] = device.memory_bandwidth / kGiga;
  if (device.compute_units > 0) json["compute_units"] = device.compute_units;
  json["peak_tflops"] = per_precision(device.peak_flops, kTera);
  Json achieved;
  achieved["gemm_fraction"] = per_precision(device.gemm_fraction, 1.0);
  achieved["memory_bandwidth_fraction"] = device.memory_bandwidth_fraction;
  achieved["kernel_launch_us"] = device.kernel_launch_s / kMicro;
  if (device.op_overhead_s > 0) achieved["op_overhead_us"] = device.op_overhead_s / kMicro;
  json["achieved"] = achieved;
  if (device.context_bytes > 0 || device.gemm_workspace_bytes > 0)
    json["runtime_memory_mib"] = {{"context", device.context_bytes / kMebibyte},
                                  {"gemm_workspace", device.gemm_workspace_bytes / kMebibyte}};
  json["node"] = device.node;
  json["sources"] = sources_json(device.sources);
  return format_json(json);
}

std::string node_spec_text(const NodeSpec& node) {
  Json json;
  json["node"] = node.id;
  json["name"] = node.name;
  json["device"] = node.device;
  json["devices_per_node"] = node.devices_per_node;
  json["device_link"] = {{"kind", node.device_link.kind},
                         {"bandwidth_gb_s", node.device_link.bandwidth / kGiga},
                         {"achieved_fraction", node.device_link.achieved_fraction},
                         {"latency_us", node.device_link.latency_s / kMicro},
                         {"devices_connected", node.device_link.devices_connected}};
  if (node.device_link.nvls_algorithm_bandwidth > 0)
    json["device_link"]["nvls_algbw_gb_s"] = node.device_link.nvls_algorithm_bandwidth / kGiga;
  json["host_link"] = {{"kind", node.host_link_kind},
                       {"bandwidth_gb_s", node.host_link_bandwidth / kGiga}};
  json["host_memory_bandwidth_gb_s"] = node.host_memory_bandwidth / kGiga;
  json["network"] = {{"kind", node.network.kind},
                     {"nics", node.network.nics},
                     {"nic_bandwidth_gbit_s", node.network.nic_bandwidth * 8 / kGiga},
                     {"achieved_fraction", node.network.achieved_fraction},
                     {"latency_us", node.network.latency_s / kMicro}};
  if (node.collective_group_bytes > 0 || node.all_to_all_peer_bytes > 0)
    json["communicator_memory_mib"] = {
        {"per_group", node.collective_group_bytes / kMebibyte},
        {"per_all_to_all_peer", node.all_to_all_peer_bytes / kMebibyte}};
  json["sources"] = sources_json(node.sources);
  return format_json(json);
}

void check_device_file_path(const std::string& device_path) {
  if (std::filesystem::path(device_path).extension() != ".json")
    throw ExperimentError(
        "the device file " + quoted_excerpt(device_path, kPathExcerptBytes) +
        " must end in .json, which is how an experiment's simulation.profile tells a file from a "
        "catalogue name");
}

std::string save_hardware_files(ClusterSpec cluster, const std::string& device_path) {
  check_device_file_path(device_path);
  const std::filesystem::path path(device_path);
  const std::string id = path.stem().string();
  const std::string node_file = id + "-node.json";
  cluster.device.id = id;
  cluster.device.node = node_file;
  cluster.node.id = id + "-node";
  cluster.node.device = id;
  const std::string node_path = (path.parent_path() / node_file).string();
  write_text_file(node_path, node_spec_text(cluster.node), "node file");
  write_text_file(device_path, device_spec_text(cluster.device), "device file");
  return node_path;
}

}  // namespace pipelab
