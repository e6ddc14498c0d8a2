#include "core/trace/trace_events.h"

#include <algorithm>
#include <cassert>
#include <stdexcept>

#include "core/plan/device_layout.h"

namespace pipelab {

const char* memory_category_name(MemoryCategory category) {
  switch (category) {
    case MemoryCategory::Weights:
      return "weights";
    case MemoryCategory::Gradients:
      return "gradients";
    case MemoryCategory::OptimizerState:
      return "optimizer_state";
    case MemoryCategory::Activations:
      return "activations";
    case MemoryCategory::StashedWeights:
      return "stashed_weights";
    case MemoryCategory::CommBuffers:
      return "comm_buffers";
    case MemoryCategory::Workspace:
      return "workspace";
    case MemoryCategory::Host:
      return "host";
  }
  assert(false && "unknown MemoryCategory");
  return "unknown";
}

int64_t total_bytes(const MemoryBytes& bytes) {
  int64_t total = 0;
  for (int c = 0; c < kMemoryCategoryCount; ++c)
    if (is_on_device(static_cast<MemoryCategory>(c))) total += bytes[c];
  return total;
}

int device_count(const Trace& trace) {
  int count = 0;
  for (const DeviceInfo& info : trace.devices) count = std::max(count, info.device + 1);
  for (const TraceEvent& event : trace.events) count = std::max(count, event.device + 1);
  for (const MemorySample& sample : trace.memory) count = std::max(count, sample.device + 1);
  return count;
}

std::string device_label(const Trace& trace, int device) {
  for (const DeviceInfo& info : trace.devices) {
    if (info.device == device && !info.label.empty()) return info.label;
  }
  return "device " + std::to_string(device);
}

namespace {

void require_positive(const char* name, int value) {
  if (value < 1) {
    throw std::invalid_argument(std::string("describe_devices: ") + name + " must be >= 1 (got " +
                                std::to_string(value) + ")");
  }
}

// "device 5 · stage 1 · replica 1", "device 2 · stages 2,6 · replica 0 · shard 1",
// "device 3 · stage 0 · replica 0 · context 1 · shard 1".
std::string make_label(const DeviceInfo& info, int tp, int cp) {
  std::string label = "device " + std::to_string(info.device);
  label += info.stages.size() == 1 ? " · stage " : " · stages ";
  for (size_t i = 0; i < info.stages.size(); ++i) {
    if (i > 0) label += ",";
    label += std::to_string(info.stages[i]);
  }
  label += " · replica " + std::to_string(info.replica);
  if (cp > 1) label += " · context " + std::to_string(info.context);
  if (tp > 1) label += " · shard " + std::to_string(info.shard);
  return label;
}

}  // namespace

std::vector<DeviceInfo> describe_devices(int dp, int tp, int pp, int chunks, bool v_shape, int cp) {
  require_positive("dp", dp);
  require_positive("tp", tp);
  require_positive("pp", pp);
  require_positive("chunks", chunks);
  require_positive("cp", cp);

  std::vector<DeviceInfo> devices;
  const DeviceLayout layout{dp, tp, pp, v_shape, 1, cp};
  devices.reserve(static_cast<size_t>(layout.device_count()));
  for (int device = 0; device < layout.device_count(); ++device) {
    const DeviceCoord coord = layout.coord_of(device);
    DeviceInfo info;
    info.device = device;
    info.replica = coord.replica;
    info.pipeline_rank = coord.pipeline_rank;
    info.shard = coord.shard;
    info.context = coord.context;
    // Interleaved placement: rank r holds virtual stages r, r + pp, r + 2 pp, ...;
    // V placement: r and 2 pp - 1 - r.
    for (int chunk = 0; chunk < chunks; ++chunk) info.stages.push_back(layout.stage_of(coord.pipeline_rank, chunk));
    info.label = make_label(info, tp, cp);
    devices.push_back(std::move(info));
  }
  return devices;
}

}  // namespace pipelab
