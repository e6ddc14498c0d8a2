#include "core/hardware/hardware_spec.h"

#include <cmath>

#include "core/text/number_text.h"

namespace pipelab {
namespace {

constexpr double kMebibyte = 1024.0 * 1024.0;

// A rate or size must be a finite number above zero.
void check_positive(std::vector<std::string>& problems, const std::string& where, const std::string& field,
                    double value, const std::string& unit) {
  if (std::isfinite(value) && value > 0) return;
  problems.push_back(where + ": " + field + " = " + number_text(value) + " must be a positive number (" + unit +
                     ")");
}

// A size a file may leave out (0): not negative, and far below what sums of
// bytes can hold (a pebibyte).
void check_size(std::vector<std::string>& problems, const std::string& where,
                const std::string& field, double bytes) {
  if (std::isfinite(bytes) && bytes >= 0 && bytes <= kMebibyte * kMebibyte * 1024) return;
  problems.push_back(
      where + ": " + field + " = " + number_text(bytes / kMebibyte) +
      " must be >= 0 and at most 1073741824 (MiB; 0 or absent where the device holds none)");
}

void check_fraction(std::vector<std::string>& problems, const std::string& where, const std::string& field,
                    double value) {
  if (std::isfinite(value) && value > 0 && value <= 1) return;
  problems.push_back(where + ": " + field + " = " + number_text(value) +
                     " must be a fraction in (0, 1]: the share of the peak that kernels reach");
}

}  // namespace

const std::vector<std::string>& peak_precision_names() {
  static const std::vector<std::string> names = {"fp32", "tf32", "bf16", "fp16", "fp8"};
  return names;
}

double DeviceSpec::sustained_gemm_flops(const std::string& precision) const {
  const auto peak = peak_flops.find(precision);
  const auto fraction = gemm_fraction.find(precision);
  if (peak == peak_flops.end() || fraction == gemm_fraction.end()) {
    if (precision == "fp32") return 0;
    return sustained_gemm_flops("fp32");
  }
  return peak->second * fraction->second;
}

DeviceProfile device_profile(const DeviceSpec& device, const NodeSpec& node) {
  DeviceProfile profile;
  profile.name = device.id;
  profile.flops_per_s = device.sustained_gemm_flops("fp32");
  profile.bf16_flops_per_s = device.sustained_gemm_flops("bf16");
  profile.memory_bandwidth = device.memory_bandwidth * device.memory_bandwidth_fraction;
  profile.link_bandwidth = node.device_link.achieved_bandwidth();
  profile.link_latency_s = node.device_link.latency_s;
  profile.host_link_bandwidth = node.host_link_bandwidth;
  profile.host_memory_bandwidth = node.host_memory_bandwidth;
  profile.memory_bytes = static_cast<int64_t>(device.memory_bytes);
  profile.kernel_launch_s = device.kernel_launch_s;
  profile.compute_units = device.compute_units;
  profile.op_overhead_s = device.op_overhead_s;
  profile.runtime_bytes = static_cast<int64_t>(device.context_bytes + device.gemm_workspace_bytes);
  profile.collective_group_bytes = static_cast<int64_t>(node.collective_group_bytes);
  profile.all_to_all_peer_bytes = static_cast<int64_t>(node.all_to_all_peer_bytes);
  return profile;
}

std::vector<std::string> device_spec_problems(const DeviceSpec& device, const std::string& where) {
  std::vector<std::string> problems;
  check_positive(problems, where, "memory_gb", device.memory_bytes / 1e9, "GB, 10^9 bytes");
  check_positive(problems, where, "memory_bandwidth_gb_s", device.memory_bandwidth / 1e9, "GB/s");
  if (!device.peak_flops.count("fp32"))
    problems.push_back(where + ": peak_tflops has no fp32; give the device's FP32 peak (every device has one)");
  for (const auto& [precision, flops] : device.peak_flops) {
    check_positive(problems, where, "peak_tflops." + precision, flops / 1e12, "TFLOP/s");
    if (!device.gemm_fraction.count(precision))
      problems.push_back(where + ": achieved.gemm_fraction has no " + precision + ", which peak_tflops has; " +
                         "give the fraction of that peak a large GEMM sustains");
  }
  for (const auto& [precision, fraction] : device.gemm_fraction) {
    if (!device.peak_flops.count(precision))
      problems.push_back(where + ": achieved.gemm_fraction." + precision + " has no peak in peak_tflops; " +
                         "add peak_tflops." + precision + " or drop the fraction");
    check_fraction(problems, where, "achieved.gemm_fraction." + precision, fraction);
  }
  check_fraction(problems, where, "achieved.memory_bandwidth_fraction", device.memory_bandwidth_fraction);
  if (device.compute_units < 0)
    problems.push_back(
        where + ": compute_units = " + std::to_string(device.compute_units) +
        " must be >= 0 (the GPU's streaming multiprocessors; 0 or absent prices every GEMM "
        "at one rate)");
  if (!(std::isfinite(device.kernel_launch_s) && device.kernel_launch_s >= 0))
    problems.push_back(where + ": achieved.kernel_launch_us = " + number_text(device.kernel_launch_s * 1e6) +
                       " must be >= 0 (microseconds per kernel)");
  if (!(std::isfinite(device.op_overhead_s) && device.op_overhead_s >= 0))
    problems.push_back(where +
                       ": achieved.op_overhead_us = " + number_text(device.op_overhead_s * 1e6) +
                       " must be >= 0 (microseconds per op; 0 or absent for a GPU)");
  check_size(problems, where, "runtime_memory_mib.context", device.context_bytes);
  check_size(problems, where, "runtime_memory_mib.gemm_workspace", device.gemm_workspace_bytes);
  if (device.node.empty())
    problems.push_back(where + ": node is empty; name the node type this device sits in (e.g. dgx-h100)");
  return problems;
}

std::vector<std::string> node_spec_problems(const NodeSpec& node, const std::string& where) {
  std::vector<std::string> problems;
  if (node.device.empty())
    problems.push_back(where + ": device is empty; name the device its slots hold (e.g. h100)");
  if (node.devices_per_node < 1)
    problems.push_back(where + ": devices_per_node = " + std::to_string(node.devices_per_node) +
                       " must be at least 1");
  check_positive(problems, where, "device_link.bandwidth_gb_s", node.device_link.bandwidth / 1e9,
                 "GB/s per device per direction");
  check_fraction(problems, where, "device_link.achieved_fraction",
                 node.device_link.achieved_fraction);
  if (!(std::isfinite(node.device_link.nvls_algorithm_bandwidth) &&
        node.device_link.nvls_algorithm_bandwidth >= 0))
    problems.push_back(where + ": device_link.nvls_algbw_gb_s = " +
                       number_text(node.device_link.nvls_algorithm_bandwidth / 1e9) +
                       " must be >= 0 (GB/s; 0 or absent where the switches cannot reduce)");
  check_fraction(problems, where, "network.achieved_fraction", node.network.achieved_fraction);
  if (!(std::isfinite(node.device_link.latency_s) && node.device_link.latency_s >= 0))
    problems.push_back(where + ": device_link.latency_us must be >= 0 (microseconds per message)");
  if (node.device_link.devices_connected < node.devices_per_node)
    problems.push_back(where + ": device_link connects " + std::to_string(node.device_link.devices_connected) +
                       " devices but the node holds " + std::to_string(node.devices_per_node) +
                       "; lower devices_per_node or raise device_link.devices_connected to what the fabric "
                       "connects");
  check_positive(problems, where, "host_link.bandwidth_gb_s", node.host_link_bandwidth / 1e9,
                 "GB/s per device per direction");
  check_positive(problems, where, "host_memory_bandwidth_gb_s", node.host_memory_bandwidth / 1e9, "GB/s");
  if (node.network.nics < 1)
    problems.push_back(where + ": network.nics = " + std::to_string(node.network.nics) +
                       " must be at least 1 (a node reaches the others through its NICs)");
  check_positive(problems, where, "network.nic_bandwidth_gbit_s", node.network.nic_bandwidth * 8 / 1e9,
                 "Gbit/s per NIC per direction");
  if (!(std::isfinite(node.network.latency_s) && node.network.latency_s >= 0))
    problems.push_back(where + ": network.latency_us must be >= 0 (microseconds per message)");
  check_size(problems, where, "communicator_memory_mib.per_group", node.collective_group_bytes);
  check_size(problems, where, "communicator_memory_mib.per_all_to_all_peer",
             node.all_to_all_peer_bytes);
  return problems;
}

}  // namespace pipelab
