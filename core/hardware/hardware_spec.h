// The hardware catalogue's entries as plain values: a device (a GPU, or one
// CPU core), the node that holds several of them, and a cluster of nodes. The
// files that describe them (hardware/devices/*.json, hardware/nodes/*.json)
// are read by core/io/hardware_catalogue.h; what the cost model needs of them
// is derived here (device_profile, network_of). Units are SI: bytes, bytes/s,
// FLOP/s, seconds.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/hardware/device_profile.h"

namespace pipelab {

// The number formats a device file gives peaks for (training precisions are core/model/precision.h).
const std::vector<std::string>& peak_precision_names();  // fp32, tf32, bf16, fp16, fp8

// One device class as its datasheet describes it, and what its kernels achieve.
struct DeviceSpec {
  std::string id;    // "h100": the file's name and what experiments call it
  std::string name;  // "NVIDIA H100 SXM5 80 GB"
  double memory_bytes = 0;
  double memory_bandwidth = 0;              // datasheet peak, bytes/s
  std::map<std::string, double> peak_flops;  // precision -> dense peak FLOP/s (fp32 always)
  // Fraction of the peak a large GEMM sustains, per precision of peak_flops.
  std::map<std::string, double> gemm_fraction;
  double memory_bandwidth_fraction = 0;  // of memory_bandwidth, reached by streaming kernels
  // Streaming multiprocessors (a GPU's units that each run one tile of a
  // GEMM at a time); 0 where GEMMs are priced at one rate whatever their shape.
  int compute_units = 0;
  double kernel_launch_s = 0;            // per kernel
  std::string node;                      // the node type it sits in by default
  std::map<std::string, std::string> sources;  // figure -> where it comes from
  double op_overhead_s = 0;  // per compute op, where the host runs ops one by one (DeviceProfile)
  // Device memory the software stack holds on each device (runtime_memory_mib;
  // 0 when absent, as on a CPU): the CUDA context, and the GEMM library's workspace.
  double context_bytes = 0;
  double gemm_workspace_bytes = 0;

  // What a large GEMM sustains in `precision`; a precision the device has no
  // peak for runs at its FP32 rate.
  double sustained_gemm_flops(const std::string& precision) const;
};

// A fabric between devices (NVLink through NVSwitch, PCIe peer-to-peer).
struct LinkSpec {
  std::string kind;
  double bandwidth = 0;        // per device, per direction, bytes/s
  double latency_s = 0;        // per message
  int devices_connected = 0;   // how many devices it connects all-to-all
  // Of `bandwidth`, what a large collective's bus bandwidth reaches (nccl-tests' busbw).
  double achieved_fraction = 1;
  // NVLink SHARP (NVLS): the switch reduces, so an all-reduce inside the node
  // takes bytes / this whatever the members (nccl-tests' algbw, bytes/s);
  // 0 where the switches cannot reduce.
  double nvls_algorithm_bandwidth = 0;

  double achieved_bandwidth() const { return bandwidth * achieved_fraction; }
};

// The network between nodes.
struct NetworkSpec {
  std::string kind;
  int nics = 0;
  double nic_bandwidth = 0;  // per NIC, per direction, bytes/s
  double latency_s = 0;      // per message, NIC to NIC
  // Of the NICs' line rate, what a large collective across nodes reaches.
  double achieved_fraction = 1;

  double node_bandwidth() const { return nics * nic_bandwidth; }
  double achieved_node_bandwidth() const { return node_bandwidth() * achieved_fraction; }
};

// One node type: its devices, the fabric between them, its host and its NICs.
struct NodeSpec {
  std::string id;    // "dgx-h100"
  std::string name;  // "NVIDIA DGX H100"
  std::string device;  // the DeviceSpec id of its devices
  int devices_per_node = 0;
  LinkSpec device_link;
  std::string host_link_kind;
  double host_link_bandwidth = 0;     // device <-> host memory, per device, bytes/s
  double host_memory_bandwidth = 0;   // a host-side optimizer step, bytes/s
  NetworkSpec network;
  // Device memory the collective library (NCCL) holds on each device
  // (communicator_memory_mib; 0 when absent): per communicator it takes part
  // in, and per peer of an all-to-all, whose direct connections each get channels.
  double collective_group_bytes = 0;
  double all_to_all_peer_bytes = 0;
  std::map<std::string, std::string> sources;
};

// A node type times a count. nodes = 0 means "as many as the run needs".
struct ClusterSpec {
  DeviceSpec device;
  NodeSpec node;
  int nodes = 0;

  int devices() const { return node.devices_per_node * nodes; }
};

// The cost model's view of one device of `node`: sustained rates (GEMMs at
// the large-GEMM fraction, memory at the streaming fraction), the node's
// device link at its achieved bandwidth, its host link. Checks nothing: the catalogue validated
// both.
DeviceProfile device_profile(const DeviceSpec& device, const NodeSpec& node);

// The problems of a device or node description, each saying what is wrong
// and how to fix it; empty when it is sound. `where` prefixes each message
// (the file's name).
std::vector<std::string> device_spec_problems(const DeviceSpec& device, const std::string& where);
std::vector<std::string> node_spec_problems(const NodeSpec& node, const std::string& where);

}  // namespace pipelab
