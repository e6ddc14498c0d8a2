#include "core/io/hardware_catalogue.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "core/io/builtin_hardware_files.h"
#include "core/io/experiment_io.h"
#include "core/io/file_text.h"
#include "core/io/json_document.h"
#include "core/text/quoted_excerpt.h"

namespace pipelab {
namespace {

constexpr double kGiga = 1e9;
constexpr double kTera = 1e12;
constexpr double kMicro = 1e-6;
constexpr double kMebibyte = 1024.0 * 1024.0;

JsonLimits hardware_limits() {
  JsonLimits limits;
  limits.document = "a hardware file";
  limits.depth_hint = "a hardware file nests 3 ({\"achieved\": {\"gemm_fraction\": {...}}})";
  return limits;
}

const Json& required(const JsonObjectReader& reader, const std::string& key, const char* hint) {
  const Json* value = reader.find(key);
  if (!value) throw ExperimentError(reader.field(key) + " is missing; " + hint);
  return *value;
}

double required_number(const JsonObjectReader& reader, const std::string& key, const char* hint) {
  return json_to_number(required(reader, key, hint), reader.field(key));
}

int required_int(const JsonObjectReader& reader, const std::string& key, const char* hint) {
  return json_to_int(required(reader, key, hint), reader.field(key));
}

std::string required_string(const JsonObjectReader& reader, const std::string& key, const char* hint) {
  return json_to_string(required(reader, key, hint), reader.field(key));
}

// {precision: number}, each precision one of peak_precision_names().
std::map<std::string, double> read_per_precision(const Json& value, const std::string& path, double scale) {
  const JsonObjectReader reader(value, path, peak_precision_names());
  std::map<std::string, double> numbers;
  for (const std::string& precision : peak_precision_names())
    if (const Json* number = reader.find(precision))
      numbers[precision] = json_to_number(*number, reader.field(precision)) * scale;
  return numbers;
}

// "sources": {figure: "where it comes from"}; any keys, string values.
std::map<std::string, std::string> read_sources(const JsonObjectReader& top) {
  std::map<std::string, std::string> sources;
  const Json* value = top.find("sources");
  if (!value) return sources;
  if (!value->is_object()) throw ExperimentError("sources must be a JSON object {\"figure\": \"source\", ...}");
  for (const auto& [key, text] : value->items()) sources[key] = json_to_string(text, "sources." + key);
  return sources;
}

DeviceSpec device_from_json(const Json& document) {
  const JsonObjectReader top(
      document, "",
      {"device", "name", "memory_gb", "memory_bandwidth_gb_s", "compute_units", "peak_tflops",
       "achieved", "runtime_memory_mib", "node", "sources"});
  DeviceSpec device;
  device.id = required_string(top, "device", "give the device's id (e.g. \"h100\")");
  top.read("name", device.name);
  device.memory_bytes = required_number(top, "memory_gb", "give its memory in GB (10^9 bytes)") * kGiga;
  device.memory_bandwidth =
      required_number(top, "memory_bandwidth_gb_s", "give its datasheet memory bandwidth in GB/s") * kGiga;
  top.read("compute_units", device.compute_units);
  device.peak_flops = read_per_precision(
      required(top, "peak_tflops", "give its dense datasheet peaks, e.g. {\"fp32\": 67, \"bf16\": 989}"),
      "peak_tflops", kTera);
  const JsonObjectReader achieved(
      required(top, "achieved",
               "give what its kernels reach: gemm_fraction, memory_bandwidth_fraction, "
               "kernel_launch_us"),
      "achieved",
      {"gemm_fraction", "memory_bandwidth_fraction", "kernel_launch_us", "op_overhead_us"});
  device.gemm_fraction = read_per_precision(
      required(achieved, "gemm_fraction", "give the fraction of each peak a large GEMM sustains"),
      "achieved.gemm_fraction", 1.0);
  device.memory_bandwidth_fraction = required_number(
      achieved, "memory_bandwidth_fraction", "give the fraction of the memory bandwidth streaming kernels reach");
  device.kernel_launch_s =
      required_number(achieved, "kernel_launch_us", "give the launch cost of one kernel in microseconds") * kMicro;
  if (const Json* overhead = achieved.find("op_overhead_us"))
    device.op_overhead_s = json_to_number(*overhead, achieved.field("op_overhead_us")) * kMicro;
  if (const Json* runtime = top.find("runtime_memory_mib")) {
    const JsonObjectReader memory(*runtime, "runtime_memory_mib", {"context", "gemm_workspace"});
    memory.read("context", device.context_bytes);
    memory.read("gemm_workspace", device.gemm_workspace_bytes);
    device.context_bytes *= kMebibyte;
    device.gemm_workspace_bytes *= kMebibyte;
  }
  device.node = required_string(top, "node", "name the node type it sits in (e.g. \"dgx-h100\")");
  device.sources = read_sources(top);
  throw_problems(device_spec_problems(device, "device " + quoted_excerpt(device.id)));
  return device;
}

NodeSpec node_from_json(const Json& document) {
  const JsonObjectReader top(
      document, "",
      {"node", "name", "device", "devices_per_node", "device_link", "host_link",
       "host_memory_bandwidth_gb_s", "network", "communicator_memory_mib", "sources"});
  NodeSpec node;
  node.id = required_string(top, "node", "give the node type's id (e.g. \"dgx-h100\")");
  top.read("name", node.name);
  node.device = required_string(top, "device", "name the device its slots hold (e.g. \"h100\")");
  node.devices_per_node = required_int(top, "devices_per_node", "give how many devices one node holds");

  const JsonObjectReader link(
      required(top, "device_link",
               "describe the fabric between its devices (bandwidth_gb_s, latency_us, "
               "devices_connected)"),
      "device_link",
      {"kind", "bandwidth_gb_s", "achieved_fraction", "nvls_algbw_gb_s", "latency_us",
       "devices_connected"});
  link.read("kind", node.device_link.kind);
  node.device_link.bandwidth =
      required_number(link, "bandwidth_gb_s", "give GB/s per device per direction") * kGiga;
  link.read("achieved_fraction", node.device_link.achieved_fraction);
  link.read("nvls_algbw_gb_s", node.device_link.nvls_algorithm_bandwidth);
  node.device_link.nvls_algorithm_bandwidth *= kGiga;
  node.device_link.latency_s = required_number(link, "latency_us", "give microseconds per message") * kMicro;
  node.device_link.devices_connected =
      required_int(link, "devices_connected", "give how many devices the fabric connects all-to-all");

  const JsonObjectReader host(required(top, "host_link", "describe the link to host memory (bandwidth_gb_s)"),
                              "host_link", {"kind", "bandwidth_gb_s"});
  host.read("kind", node.host_link_kind);
  node.host_link_bandwidth = required_number(host, "bandwidth_gb_s", "give GB/s per device per direction") * kGiga;
  node.host_memory_bandwidth =
      required_number(top, "host_memory_bandwidth_gb_s", "give what a host-side optimizer step sustains, GB/s") *
      kGiga;

  const JsonObjectReader network(
      required(top, "network",
               "describe the NICs between nodes (nics, nic_bandwidth_gbit_s, latency_us)"),
      "network", {"kind", "nics", "nic_bandwidth_gbit_s", "achieved_fraction", "latency_us"});
  network.read("kind", node.network.kind);
  node.network.nics = required_int(network, "nics", "give how many NICs one node has");
  node.network.nic_bandwidth =
      required_number(network, "nic_bandwidth_gbit_s", "give Gbit/s per NIC per direction") * kGiga / 8;
  network.read("achieved_fraction", node.network.achieved_fraction);
  node.network.latency_s = required_number(network, "latency_us", "give microseconds per message") * kMicro;
  if (const Json* communicators = top.find("communicator_memory_mib")) {
    const JsonObjectReader memory(*communicators, "communicator_memory_mib",
                                  {"per_group", "per_all_to_all_peer"});
    memory.read("per_group", node.collective_group_bytes);
    memory.read("per_all_to_all_peer", node.all_to_all_peer_bytes);
    node.collective_group_bytes *= kMebibyte;
    node.all_to_all_peer_bytes *= kMebibyte;
  }
  node.sources = read_sources(top);
  throw_problems(node_spec_problems(node, "node " + quoted_excerpt(node.id)));
  return node;
}

template <typename Parse>
auto parse_hardware_text(const std::string& json_text, const std::string& where, Parse parse) {
  try {
    return parse(parse_json_document(json_text, hardware_limits()));
  } catch (const ExperimentError& error) {
    throw ExperimentError(where + ": " + error.what());
  }
}

std::vector<std::string> builtin_ids(const std::string& kind) {
  std::vector<std::string> ids;
  for (const BuiltinHardwareFile& file : builtin_hardware_files())
    if (kind == file.kind) ids.push_back(file.id);
  std::sort(ids.begin(), ids.end());
  return ids;
}

const char* builtin_text(const std::string& kind, const std::string& id) {
  for (const BuiltinHardwareFile& file : builtin_hardware_files())
    if (kind == file.kind && id == file.id) return file.text;
  return nullptr;
}

// The text of a catalogue entry or of a user's file, and the name to use in
// messages; `kind` is "devices" or "nodes", `what` "device" or "node type".
struct HardwareText {
  std::string text;
  std::string where;
  std::string folder;  // a file's folder, for the paths it names; "" for built-ins
};

HardwareText hardware_text(const std::string& name_or_path, const std::string& base_dir, const std::string& kind,
                           const std::string& what) {
  if (names_hardware_file(name_or_path)) {
    const std::string path = resolve_path_beside(name_or_path, base_dir);
    return {read_text_file(path, "hardware"), path_excerpt(name_or_path), directory_of(path)};
  }
  if (const char* text = builtin_text(kind, name_or_path)) return {text, "hardware/" + kind + "/" + name_or_path + ".json", ""};
  std::vector<std::string> ids = builtin_ids(kind);
  throw ExperimentError(quoted_excerpt(name_or_path) + " is not a " + what + " of the hardware catalogue; valid: " +
                        [&] {
                          std::string list;
                          for (const std::string& id : ids) list += (list.empty() ? "" : ", ") + id;
                          return list;
                        }() +
                        ", or the path of a .json file that describes one (see hardware/README.md)");
}

// Every built-in entry of `kind`, parsed (once: validation asks for them at
// every edit).
template <typename Parse>
auto parse_builtins(const std::string& kind, Parse parse) {
  std::map<std::string, decltype(parse("", ""))> parsed;
  for (const std::string& id : builtin_ids(kind))
    parsed[id] = parse(builtin_text(kind, id), "hardware/" + kind + "/" + id + ".json");
  return parsed;
}

}  // namespace

std::vector<std::string> catalogue_device_ids() { return builtin_ids("devices"); }
std::vector<std::string> catalogue_node_ids() { return builtin_ids("nodes"); }

bool names_hardware_file(const std::string& name) {
  return name.find('/') != std::string::npos || name.find('\\') != std::string::npos ||
         (name.size() > 5 && name.compare(name.size() - 5, 5, ".json") == 0);
}

DeviceSpec parse_device_spec(const std::string& json_text, const std::string& where) {
  return parse_hardware_text(json_text, where, device_from_json);
}

NodeSpec parse_node_spec(const std::string& json_text, const std::string& where) {
  return parse_hardware_text(json_text, where, node_from_json);
}

DeviceSpec load_device_spec(const std::string& name_or_path, const std::string& base_dir) {
  static const auto builtins = parse_builtins("devices", parse_device_spec);
  if (!names_hardware_file(name_or_path))
    if (const auto found = builtins.find(name_or_path); found != builtins.end()) return found->second;
  const HardwareText file = hardware_text(name_or_path, base_dir, "devices", "device");
  DeviceSpec device = parse_device_spec(file.text, file.where);
  // The node a user's device file names is looked up beside that file.
  if (!file.folder.empty() && names_hardware_file(device.node))
    device.node = resolve_path_beside(device.node, file.folder);
  return device;
}

NodeSpec load_node_spec(const std::string& name_or_path, const std::string& base_dir) {
  static const auto builtins = parse_builtins("nodes", parse_node_spec);
  if (!names_hardware_file(name_or_path))
    if (const auto found = builtins.find(name_or_path); found != builtins.end()) return found->second;
  const HardwareText file = hardware_text(name_or_path, base_dir, "nodes", "node type");
  return parse_node_spec(file.text, file.where);
}

std::optional<DeviceProfile> find_device_profile(const std::string& name) {
  if (!builtin_text("devices", name)) return std::nullopt;
  const DeviceSpec device = load_device_spec(name);
  return device_profile(device, load_node_spec(device.node));
}

std::vector<std::string> device_profile_names() { return catalogue_device_ids(); }

ClusterSpec resolve_cluster(const SimulationSpec& simulation, const std::string& base_dir, int devices_needed) {
  // Each file's errors name the field that led to it.
  const auto naming = [](const std::string& field, auto load) {
    try {
      return load();
    } catch (const ExperimentError& error) {
      throw ExperimentError(field + ": " + error.what());
    }
  };
  ClusterSpec cluster;
  cluster.device = naming("simulation.profile", [&] { return load_device_spec(simulation.profile, base_dir); });
  if (simulation.cluster.node.empty()) {
    cluster.node = naming("simulation.profile's node", [&] { return load_node_spec(cluster.device.node, base_dir); });
  } else {
    cluster.node = naming("simulation.cluster.node", [&] { return load_node_spec(simulation.cluster.node, base_dir); });
    if (cluster.node.device != cluster.device.id)
      throw ExperimentError("simulation.cluster.node " + quoted_excerpt(cluster.node.id) + " holds " +
                            quoted_excerpt(cluster.node.device) + " devices but simulation.profile is " +
                            quoted_excerpt(cluster.device.id) + "; set simulation.profile to " +
                            quoted_excerpt(cluster.node.device) + " or choose a node type that holds " +
                            quoted_excerpt(cluster.device.id));
  }
  const int per_node = cluster.node.devices_per_node;
  if (simulation.cluster.nodes < 0)
    throw ExperimentError("simulation.cluster.nodes = " + std::to_string(simulation.cluster.nodes) +
                          " must be >= 0 (0: as many nodes as the run needs)");
  cluster.nodes = simulation.cluster.nodes > 0 ? simulation.cluster.nodes
                                                : std::max(1, (devices_needed + per_node - 1) / per_node);
  if (static_cast<int64_t>(cluster.nodes) * per_node < devices_needed)
    throw ExperimentError("simulation.cluster has " + std::to_string(cluster.nodes) + " node" +
                          (cluster.nodes == 1 ? "" : "s") + " x " + std::to_string(per_node) + " devices = " +
                          std::to_string(static_cast<int64_t>(cluster.nodes) * per_node) + " but the run needs " +
                          std::to_string(devices_needed) + " (dp x tp x cp x pp); raise simulation.cluster.nodes to " +
                          std::to_string((devices_needed + per_node - 1) / per_node) +
                          " or set it to 0 (as many as needed)");
  return cluster;
}

ClusterSpec experiment_cluster(const Experiment& experiment) {
  const ParallelPlan& plan = experiment.parallel;
  const int64_t devices = static_cast<int64_t>(plan.dp) * plan.tp * plan.cp * plan.pp;
  return resolve_cluster(experiment.simulation, directory_of(experiment.file_path),
                         static_cast<int>(std::min<int64_t>(devices, 1 << 30)));
}

}  // namespace pipelab
