#include "core/plan/parallel_plan.h"

#include <array>
#include <cassert>

#include "core/text/translatable.h"

namespace pipelab {
namespace {

struct ScheduleEntry {
  ScheduleKind kind;
  const char* name;
  const char* description;  // shown in the app, translated (core/text/translatable.h)
  bool v_placement = false;                    // two chunks per device placed in a V (device_layout.h)
  bool asynchronous = false;                   // no flush: updates overlap later micro-batches
  bool update_per_backward = false;            // one U after every B (else one per step)
  bool backward_reads_newest_weights = false;  // no stash: B reads what the stage holds now
};

// Order is the order users see in help texts and menus. Entries with flags
// name every field, so a flag added to the struct cannot shift them.
constexpr std::array<ScheduleEntry, 9> kSchedules = {{
    {ScheduleKind::GPipe, "gpipe",
     PIPELAB_TRANSLATABLE("core",
                          "GPipe: all forwards, then all backwards (fill-drain); one micro-batch "
                          "is naive model parallelism")},
    {ScheduleKind::OneFOneB, "1f1b",
     PIPELAB_TRANSLATABLE("core",
                          "1F1B (PipeDream-Flush): warm-up forwards, then one forward one "
                          "backward; memory of p micro-batches")},
    {ScheduleKind::Interleaved1F1B, "interleaved-1f1b",
     PIPELAB_TRANSLATABLE("core",
                          "Interleaved 1F1B: each device holds several virtual stages; the bubble "
                          "shrinks by the chunk count")},
    {ScheduleKind::ZeroBubbleH1, "zb-h1",
     PIPELAB_TRANSLATABLE("core",
                          "Zero-bubble H1: backward split into input and weight gradients, weight "
                          "gradients fill the bubbles")},
    {.kind = ScheduleKind::ZeroBubbleV,
     .name = "zb-v",
     .description = PIPELAB_TRANSLATABLE(
         "core",
         "Zero-bubble V: two chunks per device placed in a V, split backward; about no bubble when "
         "F = BI = BW"),
     .v_placement = true},
    {.kind = ScheduleKind::DualPipeV,
     .name = "dualpipev",
     .description = PIPELAB_TRANSLATABLE("core",
                                         "DualPipeV: DeepSeek's DualPipe cut in half, two chunks "
                                         "per device in a V; the steady phase "
                                         "pairs one chunk's forward with the other's backward"),
     .v_placement = true},
    {.kind = ScheduleKind::PipeDream,
     .name = "pipedream",
     .description = PIPELAB_TRANSLATABLE(
         "core",
         "PipeDream: asynchronous 1F1B without flush; stage s stashes p - s weight versions"),
     .asynchronous = true, .update_per_backward = true},
    {.kind = ScheduleKind::PipeDream2BW,
     .name = "pipedream-2bw",
     .description = PIPELAB_TRANSLATABLE("core",
                                         "PipeDream-2BW: asynchronous, gradients accumulated over "
                                         "m micro-batches, two weight versions"),
     .asynchronous = true},
    {.kind = ScheduleKind::PipeMare,
     .name = "pipemare",
     .description = PIPELAB_TRANSLATABLE(
         "core",
         "PipeMare: PipeDream's order with one weight version; a backward reads newer weights "
         "than its forward"),
     .asynchronous = true, .update_per_backward = true, .backward_reads_newest_weights = true},
}};

const ScheduleEntry& entry_of(ScheduleKind kind) {
  for (const auto& entry : kSchedules)
    if (entry.kind == kind) return entry;
  assert(false && "unknown schedule kind");
  return kSchedules[0];
}

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

const char* schedule_name(ScheduleKind kind) { return entry_of(kind).name; }

const char* schedule_description(ScheduleKind kind) { return entry_of(kind).description; }

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

bool uses_v_placement(ScheduleKind kind) { return entry_of(kind).v_placement; }

bool is_asynchronous(ScheduleKind kind) { return entry_of(kind).asynchronous; }

bool updates_after_every_backward(ScheduleKind kind) { return entry_of(kind).update_per_backward; }

bool backward_reads_newest_weights(ScheduleKind kind) {
  return entry_of(kind).backward_reads_newest_weights;
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

ExpertShard expert_shard(const ParallelPlan& plan, int replica) { return {plan.ep, replica % plan.ep}; }

}  // namespace pipelab
