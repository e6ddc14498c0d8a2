// Cost model: how long each op takes and how much memory it holds, either from
// FLOPs and a device profile, or from explicit unit costs for teaching.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/hardware/device_profile.h"
#include "core/plan/stage_profile.h"
#include "core/schedule/op.h"
#include "core/schedule/unit_costs.h"
#include "core/sim/cluster_topology.h"
#include "core/sim/collective_cost.h"

namespace pipelab {

class CostModel {
 public:
  // Every compute op and every message costs its unit.
  static CostModel unit(const UnitCosts& costs);
  // Times from each stage's FLOPs and bytes on `device`: a compute op takes
  // its FLOPs at the GEMM rate plus its memory-bound kernels' bytes at the
  // memory bandwidth (StageProfile::forward_memory_bytes), and no less than
  // its kernels x the device's launch cost (StageProfile::forward_kernels:
  // small models on a GPU are launch-bound). `optimizer_slots` is
  // the optimizer's state per parameter (0 plain SGD, 1 momentum, 2 Adam).
  static CostModel from_profiles(const std::vector<StageProfile>& stages, const DeviceProfile& device,
                                 int optimizer_slots);
  // Measured per-op durations (replay, core/sim/replay.h): duration() and
  // collective_duration() return lookup(op) when it has a value, and
  // `fallback`'s estimate otherwise. Everything else is fallback's.
  using DurationLookup = std::function<std::optional<double>(const Op&)>;
  static CostModel from_durations(const CostModel& fallback, DurationLookup lookup);

  // Seconds (or units). OFFLOAD and RELOAD take bytes / host_link_bandwidth
  // (unit mode: comm); a profile without a host link cannot price them.
  double duration(const Op& op) const;
  // An AllReduce over `members` devices (ring: 2(n-1)/n * bytes / bandwidth +
  // 2(n-1) latencies; unit mode: comm). duration() of an AllReduce assumes two
  // members; the simulator calls the overload with the group's devices, which
  // prices it on the cluster when the model has one (collective_cost.h).
  // A context-parallel exchange (ring attention) overlaps its block's
  // attention GEMMs, which the compute op already counts: it costs only what
  // the ring takes beyond them (StageProfile::context_parallel_exchanges).
  double collective_duration(const Op& op, int members) const;
  double collective_duration(const Op& op, const std::vector<int>& members) const;
  // The same with the members' placement worked out beforehand (group_span):
  // the simulator asks at every member's arrival, so it places each group once.
  double collective_duration(const Op& op, const std::vector<int>& members,
                             const std::optional<GroupSpan>& span) const;
  // Where `members` sit on the cluster (checked to be placed on it), or
  // nothing when there is no cluster (or in unit mode).
  std::optional<GroupSpan> group_span(const std::vector<int>& members) const;
  // Places the devices on a cluster: messages and collectives between nodes
  // then cross the network (cluster_topology.h). Without one, every pair of
  // devices talks over the profile's link.
  void set_topology(ClusterTopology topology);
  const std::optional<ClusterTopology>& topology() const { return topology_; }
  // The optimizer step `op` (a U) run on the host (optimizer offloading):
  // memory-bound at host_memory_bandwidth (unit mode: u).
  double host_update_duration(const Op& op) const;
  // Stragglers: compute ops on `device` take `factor` (> 0) times longer.
  // Communication is unaffected. Throws std::invalid_argument for factor <= 0.
  void set_compute_slowdown(int device, double factor);
  double compute_slowdown(int device) const;
  // Seconds of arithmetic in compute op `op` on the device's GEMM rate: its
  // GEMMs priced by shape (gemm_time.h), the rest of its FLOPs at the rate;
  // what duration() adds its memory-bound work, launches and overhead to.
  // Calibration divides the rate out to fit it. 0 in unit mode.
  double arithmetic_seconds(const Op& op) const;
  // Bytes the optimizer step reads and writes per parameter: weight, gradient
  // and each state slot read, weight and each slot written (4-byte floats).
  static int64_t optimizer_bytes_per_param(int optimizer_slots);
  bool is_unit() const { return unit_mode_; }
  const UnitCosts& unit_costs() const { return unit_; }
  const std::vector<StageProfile>& stages() const { return stages_; }
  const DeviceProfile& device() const { return device_; }
  int optimizer_slots() const { return optimizer_slots_; }

 private:
  // A point-to-point message between nodes (ClusterTopology's scatter/gather of pipeline messages).
  double network_message_time(const Op& op) const;
  // `seconds` of communication less what hides behind compute (see collective_duration).
  double exposed_part(const Op& op, double seconds) const;
  // Seconds of arithmetic in an op of `kind` on `stage`: its GEMMs by shape
  // (gemm_time.h), the rest of its FLOPs at the GEMM rate.
  double arithmetic_time(OpKind kind, int stage) const;

  // Per stage, the arithmetic seconds of a forward, an input gradient and a
  // weight gradient (from_profiles works them out once).
  struct StageArithmetic {
    double forward = 0, backward_input = 0, backward_weight = 0;
  };

  bool unit_mode_ = true;
  UnitCosts unit_;
  std::vector<StageProfile> stages_;
  std::vector<StageArithmetic> arithmetic_;
  DeviceProfile device_;
  int optimizer_slots_ = 0;
  std::optional<ClusterTopology> topology_;
  std::vector<double> compute_slowdown_;  // per device; missing entries mean 1
  DurationLookup lookup_;                 // from_durations: measured times first
};

}  // namespace pipelab
