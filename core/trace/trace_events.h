// The event stream every executor emits (simulator, CPU, CUDA) and every view
// and exporter reads, without knowing which executor produced it.
#pragma once

#include <array>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "core/schedule/op.h"

namespace pipelab {

enum class MemoryCategory {
  Weights,
  Gradients,
  OptimizerState,
  Activations,
  StashedWeights,
  CommBuffers,
  Workspace,
  Host,  // the device's data parked in host memory (offloading); not on the device
};
inline constexpr int kMemoryCategoryCount = 8;
const char* memory_category_name(MemoryCategory category);  // "weights", "gradients", ...
// Every category but Host is held in the device's own memory.
constexpr bool is_on_device(MemoryCategory category) { return category != MemoryCategory::Host; }

using MemoryBytes = std::array<int64_t, kMemoryCategoryCount>;
// The bytes in the device's own memory: every category but Host.
int64_t total_bytes(const MemoryBytes& bytes);
// The most one category of a memory sample may hold (8 PiB). Readers of traces
// from outside (run files, the live stream) refuse more, and negative counts,
// so that sums over the categories stay far inside int64_t.
inline constexpr int64_t kMaxCategoryBytes = int64_t{1} << 53;

// One op as executed: when it ran on its device's clock (seconds from the run's
// start; simulated traces in unit-cost mode use abstract units).
struct TraceEvent {
  int device = 0;
  Op op;                // identity: kind, stage, chunk, micro-batch, step, version, peer
  double t_begin = 0;
  double t_end = 0;
  int64_t bytes = 0;    // communication payload
};

// A device's memory by category at time t (after a change).
struct MemorySample {
  int device = 0;
  double t = 0;
  MemoryBytes bytes{};
};

// One Mixture-of-Experts layer's routing in a step, summed over every
// replica's micro-batches: per expert, the token assignments routed to it and
// of those the ones dropped for lack of capacity.
struct ExpertLoad {
  int layer = 0;  // in the model
  std::vector<int64_t> routed;
  std::vector<int64_t> dropped;
};

// What one training step achieved.
struct StepMetrics {
  int step = 0;
  double t_end = 0;
  double loss = std::numeric_limits<double>::quiet_NaN();
  double accuracy = std::numeric_limits<double>::quiet_NaN();      // training batch
  double val_loss = std::numeric_limits<double>::quiet_NaN();
  double val_accuracy = std::numeric_limits<double>::quiet_NaN();
  double step_time_s = 0;
  double samples_per_s = 0;
  double bubble_measured = std::numeric_limits<double>::quiet_NaN();
  double bubble_simulated = std::numeric_limits<double>::quiet_NaN();
  // Mixture-of-Experts: the load-balancing loss (already in `loss`) and each
  // moe layer's load; NaN and empty without moe layers.
  double aux_loss = std::numeric_limits<double>::quiet_NaN();
  std::vector<ExpertLoad> expert_load;
};

// Who a device is, for row labels and trace process names.
struct DeviceInfo {
  int device = 0;
  int replica = 0;
  int pipeline_rank = 0;
  int shard = 0;
  int context = 0;  // context-parallel rank
  std::vector<int> stages;
  std::string label;    // e.g. "device 1 · stage 1 · replica 0"
};

// A whole recorded (or predicted) run.
struct Trace {
  std::string source = "simulated";  // "simulated" or "measured"
  std::string time_unit = "s";       // "s", or "unit" for unit-cost simulations
  std::string schedule;              // schedule name
  std::vector<DeviceInfo> devices;
  std::vector<TraceEvent> events;
  std::vector<MemorySample> memory;
  std::vector<StepMetrics> steps;
};

// Labels for every device of a dp x tp x pp grid with chunks per device,
// placed in a V when v_shape (zb-v; see device_layout.h).
// Throws std::invalid_argument when a count is below 1.
std::vector<DeviceInfo> describe_devices(int dp, int tp, int pp, int chunks, bool v_shape = false, int cp = 1);

// How many devices a trace covers: one past the highest device id in its
// device list, events or memory samples (0 for an empty trace).
int device_count(const Trace& trace);
// The trace's label for a device, or "device N" when it has none.
std::string device_label(const Trace& trace, int device);

}  // namespace pipelab
