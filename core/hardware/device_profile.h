// DeviceProfile: what the cost model knows of one device class (its sustained
// compute and memory speed, its links, its capacity). A plain value, read by
// the simulator and checked by experiment validation, so it lives below both.
// The catalogue's devices (core/io/hardware_catalogue.h) give it its figures.
#pragma once

#include <cstdint>
#include <string>

namespace pipelab {

// A device class: sustained compute and memory speed, and its links.
struct DeviceProfile {
  std::string name;              // a catalogue id: "cpu-core", "h100", ...
  double flops_per_s = 0;        // sustained FP32 GEMM throughput
  double bf16_flops_per_s = 0;   // sustained BF16 GEMM throughput (tensor cores), for bf16-mixed
  double memory_bandwidth = 0;   // bytes/s, for elementwise ops and the optimizer
  double link_bandwidth = 0;     // bytes/s between two devices
  double link_latency_s = 0;     // per message
  double host_link_bandwidth = 0;  // bytes/s between the device and host memory (offloading)
  double host_memory_bandwidth = 0;  // bytes/s of the host's optimizer step (optimizer offloading)
  int64_t memory_bytes = 0;      // capacity, for "does it fit"
  // What launching one kernel costs the host: a pass of small kernels can
  // take no less than its kernels x this, however little they compute.
  double kernel_launch_s = 0;
  // Units that each run one tile of a GEMM at a time (a GPU's streaming
  // multiprocessors): GEMMs are priced by their shape (core/sim/gemm_time.h).
  // 0 prices every GEMM at flops_per_s.
  int compute_units = 0;
  // Fixed host time every compute op costs on top of its work, where the host
  // runs ops one by one (a CPU thread's dispatch and wake-up); 0 where
  // launches overlap the device's work (GPUs: kernel_launch_s covers them).
  double op_overhead_s = 0;
  // What the device's software holds whatever the model trains (core/sim/
  // runtime_memory.h; 0 on a CPU): the CUDA context and the GEMM library's
  // workspace, NCCL's buffers per communicator the device takes part in, and
  // per peer it exchanges with in an all-to-all (expert parallelism).
  int64_t runtime_bytes = 0;
  int64_t collective_group_bytes = 0;
  int64_t all_to_all_peer_bytes = 0;
};

}  // namespace pipelab
