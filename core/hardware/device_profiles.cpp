// The device classes the cost model knows, with where each figure comes from.
#include <array>

#include "core/hardware/device_profile.h"

namespace pipelab {
namespace {

// "Sustained" figures are what a good FP32 GEMM or a streaming copy reaches,
// a fraction of the datasheet peak. Capacities are the datasheet's.
DeviceProfile cpu_core() {
  DeviceProfile profile;
  profile.name = "cpu-core";
  // One modern x86 core: 2 AVX2 FMA units x 8 FP32 lanes x 2 FLOP x ~3 GHz =
  // ~96 GFLOP/s peak; OpenBLAS SGEMM sustains roughly half of it.
  profile.flops_per_s = 50e9;
  // No BF16 units assumed: bf16 math runs at the FP32 rate.
  profile.bf16_flops_per_s = profile.flops_per_s;
  // Single-thread STREAM-like bandwidth of a desktop/server core.
  profile.memory_bandwidth = 10e9;
  // Devices are threads of one process: a message is a memcpy through shared
  // memory (~5 GB/s for one core copying) plus ~1 us of queue hand-off.
  profile.link_bandwidth = 5e9;
  profile.link_latency_s = 1e-6;
  // Offloading to "host" memory is a memcpy within the same RAM: one core
  // copies at about the rate it moves messages.
  profile.host_link_bandwidth = 5e9;
  profile.host_memory_bandwidth = profile.memory_bandwidth;  // the host is this core
  // A share of host RAM per virtual device; an arbitrary but typical figure.
  profile.memory_bytes = int64_t{8} * 1024 * 1024 * 1024;
  return profile;
}

DeviceProfile h100() {
  DeviceProfile profile;
  profile.name = "h100";
  // NVIDIA H100 SXM5 datasheet: 67 TFLOP/s FP32 (non-tensor-core) peak; large
  // SGEMMs sustain ~75% of it. BF16 dense tensor-core peak is 989 TFLOP/s;
  // large GEMMs sustain roughly two thirds of it.
  profile.flops_per_s = 50e12;
  profile.bf16_flops_per_s = 650e12;
  // Datasheet: 3.35 TB/s HBM3; streaming kernels reach ~90%.
  profile.memory_bandwidth = 3.0e12;
  // NVLink 4: 900 GB/s total per GPU, i.e. 450 GB/s per direction; NCCL's
  // small-message latency within a node is a few microseconds.
  profile.link_bandwidth = 450e9;
  profile.link_latency_s = 5e-6;
  // Host memory over PCIe 5.0 x16: 64 GB/s per direction on paper; pinned
  // cudaMemcpyAsync reaches about 50 GB/s (NVIDIA's bandwidthTest on H100
  // hosts reports 50-55). A PCIe 4.0 x16 host would reach about 25.
  profile.host_link_bandwidth = 50e9;
  // The host's optimizer step (ZeRO-Offload's CPU Adam) over all cores of a
  // two-socket server: STREAM triad there reaches 200-300 GB/s; we assume a
  // vectorised Adam sustains about a third of it.
  profile.host_memory_bandwidth = 100e9;
  profile.memory_bytes = int64_t{80} * 1000 * 1000 * 1000;  // 80 GB
  return profile;
}

DeviceProfile h200() {
  DeviceProfile profile;
  profile.name = "h200";
  // NVIDIA H200 SXM datasheet: the H100's Hopper chip (67 TFLOP/s FP32 peak),
  // with 141 GB of HBM3e at 4.8 TB/s; same NVLink 4 as the H100.
  profile.flops_per_s = 50e12;
  profile.bf16_flops_per_s = 650e12;
  profile.memory_bandwidth = 4.3e12;  // ~90% of 4.8 TB/s
  profile.link_bandwidth = 450e9;
  profile.link_latency_s = 5e-6;
  profile.host_link_bandwidth = 50e9;  // PCIe 5.0 x16, as the H100's
  profile.host_memory_bandwidth = 100e9;  // the same host as the H100's
  profile.memory_bytes = int64_t{141} * 1000 * 1000 * 1000;  // 141 GB
  return profile;
}

std::array<DeviceProfile, 3> all_profiles() { return {cpu_core(), h100(), h200()}; }

}  // namespace

std::optional<DeviceProfile> find_device_profile(const std::string& name) {
  for (const DeviceProfile& profile : all_profiles())
    if (profile.name == name) return profile;
  return std::nullopt;
}

std::vector<std::string> device_profile_names() {
  std::vector<std::string> names;
  for (const DeviceProfile& profile : all_profiles()) names.push_back(profile.name);
  return names;
}

}  // namespace pipelab
