#include "core/plan/parallel_plan.h"

#include <array>
#include <cassert>

namespace pipelab {
namespace {

struct ScheduleEntry {
  ScheduleKind kind;
  const char* name;
  const char* description;
};

// Order is the order users see in help texts and menus.
constexpr std::array<ScheduleEntry, 7> kSchedules = {{
    {ScheduleKind::GPipe, "gpipe",
     "GPipe: all forwards, then all backwards (fill-drain); one micro-batch is naive model parallelism"},
    {ScheduleKind::OneFOneB, "1f1b",
     "1F1B (PipeDream-Flush): warm-up forwards, then one forward one backward; memory of p micro-batches"},
    {ScheduleKind::Interleaved1F1B, "interleaved-1f1b",
     "Interleaved 1F1B: each device holds several virtual stages; the bubble shrinks by the chunk count"},
    {ScheduleKind::ZeroBubbleH1, "zb-h1",
     "Zero-bubble H1: backward split into input and weight gradients, weight gradients fill the bubbles"},
    {ScheduleKind::ZeroBubbleV, "zb-v",
     "Zero-bubble V: two chunks per device placed in a V, split backward; about no bubble when F = BI = BW"},
    {ScheduleKind::PipeDream, "pipedream",
     "PipeDream: asynchronous 1F1B without flush; stage s stashes p - s weight versions"},
    {ScheduleKind::PipeDream2BW, "pipedream-2bw",
     "PipeDream-2BW: asynchronous, gradients accumulated over m micro-batches, two weight versions"},
}};

struct OffloadEntry {
  OffloadMode mode;
  const char* name;
};
constexpr std::array<OffloadEntry, 3> kOffloadModes = {{
    {OffloadMode::None, "none"},
    {OffloadMode::Activations, "activations"},
    {OffloadMode::Optimizer, "optimizer"},
}};

}  // namespace

const char* schedule_name(ScheduleKind kind) {
  for (const auto& entry : kSchedules)
    if (entry.kind == kind) return entry.name;
  assert(false && "unknown schedule kind");
  return "?";
}

const char* schedule_description(ScheduleKind kind) {
  for (const auto& entry : kSchedules)
    if (entry.kind == kind) return entry.description;
  return "";
}

std::optional<ScheduleKind> parse_schedule(const std::string& name) {
  for (const auto& entry : kSchedules)
    if (name == entry.name) return entry.kind;
  return std::nullopt;
}

std::vector<std::string> schedule_names() {
  std::vector<std::string> names;
  for (const auto& entry : kSchedules) names.emplace_back(entry.name);
  return names;
}

bool is_asynchronous(ScheduleKind kind) {
  return kind == ScheduleKind::PipeDream || kind == ScheduleKind::PipeDream2BW;
}

const char* update_name(UpdateMode mode) { return mode == UpdateMode::Sync ? "sync" : "async"; }

std::optional<UpdateMode> parse_update(const std::string& name) {
  if (name == "sync") return UpdateMode::Sync;
  if (name == "async") return UpdateMode::Async;
  return std::nullopt;
}

const char* offload_name(OffloadMode mode) {
  for (const auto& entry : kOffloadModes)
    if (entry.mode == mode) return entry.name;
  assert(false && "unknown offload mode");
  return "?";
}

std::optional<OffloadMode> parse_offload(const std::string& name) {
  for (const auto& entry : kOffloadModes)
    if (name == entry.name) return entry.mode;
  return std::nullopt;
}

std::vector<std::string> offload_names() {
  std::vector<std::string> names;
  for (const auto& entry : kOffloadModes) names.emplace_back(entry.name);
  return names;
}

const char* partition_name(PartitionRule rule) {
  switch (rule) {
    case PartitionRule::Balanced: return "balanced";
    case PartitionRule::Uniform: return "uniform";
    case PartitionRule::Params: return "params";
    case PartitionRule::Explicit: return "explicit";
  }
  return "?";
}

std::optional<PartitionRule> parse_partition(const std::string& name) {
  if (name == "balanced") return PartitionRule::Balanced;
  if (name == "uniform") return PartitionRule::Uniform;
  if (name == "params") return PartitionRule::Params;
  if (name == "explicit") return PartitionRule::Explicit;
  return std::nullopt;
}

DeviceCoord device_coord(const ParallelPlan& plan, int device) {
  return plan.layout().coord_of(device);
}

int device_id(const ParallelPlan& plan, DeviceCoord coord) { return plan.layout().device_of(coord); }

}  // namespace pipelab
