#include "core/sim/cost_model.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "core/sim/collective_cost.h"
#include "core/sim/gemm_time.h"

namespace pipelab {
namespace {

// Time for one point-to-point message of `bytes` on a link.
double message_time(const DeviceProfile& device, int64_t bytes) {
  return device.link_latency_s + static_cast<double>(bytes) / device.link_bandwidth;
}

CollectiveKind collective_kind(OpKind kind) {
  switch (kind) {
    case OpKind::ReduceScatter: return CollectiveKind::ReduceScatter;
    case OpKind::AllGather: return CollectiveKind::AllGather;
    case OpKind::AllToAll: return CollectiveKind::AllToAll;
    default: return CollectiveKind::AllReduce;
  }
}

// Time to copy `bytes` between the device and host memory (OFFLOAD, RELOAD).
double host_copy_time(const DeviceProfile& device, int64_t bytes) {
  if (!(device.host_link_bandwidth > 0))
    throw std::invalid_argument("device profile '" + device.name +
                                "' has no host_link_bandwidth, so offloading cannot be priced; "
                                "give it one or use offload = none");
  return static_cast<double>(bytes) / device.host_link_bandwidth;
}

// An op's time in unit costs: the units of the work it does.
double unit_time(const StageWork& work, const UnitCosts& unit) {
  double time = 0;
  if (work.forward) time += unit.f;
  if (work.backward_input) time += unit.b;
  if (work.backward_weight) time += unit.w;
  if (work.optimizer_step) time += unit.u;
  return time;
}

// Seconds for one pass's work: its listed GEMMs by shape, the FLOPs they do
// not account for at the device's GEMM rate.
double pass_seconds(double flops, const std::vector<GemmCount>& gemms, const DeviceProfile& device,
                    int64_t element_bytes) {
  if (device.compute_units <= 0) return flops / device.flops_per_s;
  double seconds = 0;
  for (const GemmCount& gemm : gemms)
    seconds += static_cast<double>(gemm.count) * gemm_seconds(gemm.shape, device, element_bytes);
  return seconds + std::max(0.0, flops - gemm_flops(gemms)) / device.flops_per_s;
}

void check_positive(double value, const char* field, const std::string& profile) {
  if (!(value > 0))
    throw std::invalid_argument("device profile '" + profile + "': " + field +
                                " must be > 0; give the device a positive rate");
}

}  // namespace

CostModel CostModel::unit(const UnitCosts& costs) {
  const double values[] = {costs.f, costs.b, costs.w, costs.comm, costs.u};
  const char* names[] = {"f", "b", "w", "comm", "u"};
  for (int i = 0; i < 5; ++i)
    if (!(values[i] >= 0))
      throw std::invalid_argument(std::string("unit cost ") + names[i] +
                                  " must be >= 0; use a non-negative number");
  CostModel model;
  model.unit_mode_ = true;
  model.unit_ = costs;
  return model;
}

CostModel CostModel::from_profiles(const std::vector<StageProfile>& stages,
                                   const DeviceProfile& device, int optimizer_slots) {
  if (stages.empty())
    throw std::invalid_argument("cost model needs one StageProfile per stage; got none");
  if (optimizer_slots < 0)
    throw std::invalid_argument("optimizer_slots = " + std::to_string(optimizer_slots) +
                                " must be >= 0 (0 SGD, 1 momentum, 2 Adam)");
  check_positive(device.flops_per_s, "flops_per_s", device.name);
  check_positive(device.memory_bandwidth, "memory_bandwidth", device.name);
  check_positive(device.link_bandwidth, "link_bandwidth", device.name);
  if (!(device.link_latency_s >= 0))
    throw std::invalid_argument("device profile '" + device.name +
                                "': link_latency_s must be >= 0");
  CostModel model;
  model.unit_mode_ = false;
  model.stages_ = stages;
  model.device_ = device;
  model.optimizer_slots_ = optimizer_slots;
  for (const StageProfile& stage : stages) {
    const int64_t bytes = stage.precision.activation;
    model.arithmetic_.push_back(
        {pass_seconds(stage.forward_flops, stage.forward_gemms, device, bytes),
         pass_seconds(stage.backward_input_flops, stage.backward_input_gemms, device, bytes),
         pass_seconds(stage.backward_weight_flops, stage.backward_weight_gemms, device, bytes)});
  }
  return model;
}

CostModel CostModel::from_durations(const CostModel& fallback, DurationLookup lookup) {
  CostModel model = fallback;
  model.lookup_ = std::move(lookup);
  return model;
}

int64_t CostModel::optimizer_bytes_per_param(int optimizer_slots) {
  // Read weight, gradient and every slot; write weight and every slot.
  return 4 * (2 + 1 + 2 * static_cast<int64_t>(optimizer_slots));
}

void CostModel::set_compute_slowdown(int device, double factor) {
  if (device < 0)
    throw std::invalid_argument("compute slowdown: device " + std::to_string(device) +
                                " must be >= 0");
  if (!(factor > 0))
    throw std::invalid_argument("compute slowdown of device " + std::to_string(device) +
                                " must be > 0 (1 = normal speed)");
  if (static_cast<int>(compute_slowdown_.size()) <= device)
    compute_slowdown_.resize(device + 1, 1.0);
  compute_slowdown_[device] = factor;
}

double CostModel::compute_slowdown(int device) const {
  if (device < 0 || device >= static_cast<int>(compute_slowdown_.size())) return 1.0;
  return compute_slowdown_[device];
}

double CostModel::duration(const Op& op) const {
  if (lookup_)
    if (const std::optional<double> measured = lookup_(op)) return *measured;
  if (is_collective(op.kind)) return collective_duration(op, 2);

  if (unit_mode_) {
    if (is_communication(op.kind)) return unit_.comm;
    return unit_time(op_kind_facts(op.kind).work, unit_) * compute_slowdown(op.device);
  }

  if (op_kind_facts(op.kind).family == OpFamily::HostTransfer) return host_copy_time(device_, op.bytes);
  if (is_communication(op.kind)) {
    const int devices = topology_ ? static_cast<int>(topology_->node_of_device.size()) : 0;
    if (op.peer >= 0 && op.peer < devices && op.device >= 0 && op.device < devices &&
        !topology_->same_node(op.device, op.peer))
      return network_message_time(op);
    return message_time(device_, op.bytes);
  }

  if (op.stage < 0 || op.stage >= static_cast<int>(stages_.size()))
    throw std::invalid_argument(
        "op on stage " + std::to_string(op.stage) + " has no StageProfile (the cost model has " +
        std::to_string(stages_.size()) + "); pass one profile per pipeline stage");
  const StageProfile& stage = stages_[op.stage];
  // GEMMs at the GEMM rate, the memory-bound kernels at the memory bandwidth.
  double time = arithmetic_time(op.kind, op.stage) +
                stage_memory_bytes(op.kind, stage) / device_.memory_bandwidth;
  // The host launches the pass's kernels one after another: a pass of small
  // ones takes as long as launching them.
  time = std::max(time, static_cast<double>(stage_kernels(op.kind, stage)) * device_.kernel_launch_s);
  // A host that runs ops one by one pays a fixed cost for each (calibrated on CPUs).
  time += device_.op_overhead_s;
  // The optimizer step is elementwise over every parameter: memory-bound.
  if (op_kind_facts(op.kind).work.optimizer_step)
    time += static_cast<double>(stage.params) *
            static_cast<double>(optimizer_bytes_per_param(optimizer_slots_)) /
            device_.memory_bandwidth;
  return time * compute_slowdown(op.device);
}

double CostModel::arithmetic_seconds(const Op& op) const {
  if (unit_mode_ || !is_compute(op.kind)) return 0;
  if (op.stage < 0 || op.stage >= static_cast<int>(stages_.size()))
    throw std::invalid_argument("op on stage " + std::to_string(op.stage) + " has no StageProfile");
  return arithmetic_time(op.kind, op.stage);
}

double CostModel::arithmetic_time(OpKind kind, int stage) const {
  const StageWork& work = op_kind_facts(kind).work;
  const StageArithmetic& arithmetic = arithmetic_[static_cast<size_t>(stage)];
  double seconds = 0;
  if (work.forward) seconds += arithmetic.forward;
  if (work.backward_input) seconds += arithmetic.backward_input;
  if (work.backward_weight) seconds += arithmetic.backward_weight;
  return seconds;
}

double CostModel::host_update_duration(const Op& op) const {
  if (unit_mode_) return unit_.u;
  if (!(device_.host_memory_bandwidth > 0))
    throw std::invalid_argument("device profile '" + device_.name +
                                "' has no host_memory_bandwidth, so a host optimizer step cannot be priced; "
                                "give it one or use offload = none");
  if (op.stage < 0 || op.stage >= static_cast<int>(stages_.size()))
    throw std::invalid_argument("op on stage " + std::to_string(op.stage) + " has no StageProfile");
  return static_cast<double>(stages_[op.stage].params) *
         static_cast<double>(optimizer_bytes_per_param(optimizer_slots_)) / device_.host_memory_bandwidth;
}

void CostModel::set_topology(ClusterTopology topology) { topology_ = std::move(topology); }

double CostModel::network_message_time(const Op& op) const {
  const ClusterTopology& topology = *topology_;
  const double bytes = static_cast<double>(op.bytes);
  const int slices = topology.pipeline_message_slices;
  if (slices <= 1 || op_kind_facts(op.kind).family != OpFamily::PointToPoint)
    return topology.network_latency_s + bytes / topology.network_bandwidth;
  // The shard's slice across the network, then the slices gathered inside the node.
  const double gather = (slices - 1.0) / slices * bytes / topology.device_link_bandwidth +
                        (slices - 1) * topology.device_link_latency_s;
  return topology.network_latency_s + bytes / slices / topology.network_bandwidth + gather;
}

double CostModel::collective_duration(const Op& op, const std::vector<int>& members) const {
  return collective_duration(op, members, group_span(members));
}

double CostModel::collective_duration(const Op& op, const std::vector<int>& members,
                                      const std::optional<GroupSpan>& span) const {
  if (lookup_)
    if (const std::optional<double> measured = lookup_(op)) return *measured;
  if (!span) return collective_duration(op, static_cast<int>(members.size()));
  return exposed_part(op, fastest_collective(collective_kind(op.kind),
                                             static_cast<double>(op.bytes), *span, *topology_)
                              .seconds);
}

std::optional<GroupSpan> CostModel::group_span(const std::vector<int>& members) const {
  if (!topology_ || unit_mode_) return std::nullopt;
  for (int member : members)
    if (member < 0 || member >= static_cast<int>(topology_->node_of_device.size()))
      throw std::invalid_argument("collective member " + std::to_string(member) + " is not placed on the cluster (" +
                                  std::to_string(topology_->node_of_device.size()) + " devices)");
  return pipelab::group_span(*topology_, members);
}

double CostModel::exposed_part(const Op& op, double seconds) const {
  if (op.group != CommGroup::ContextParallel || op.stage < 0 || op.stage >= static_cast<int>(stages_.size()))
    return seconds;
  for (const ContextParallelExchange& exchange : stages_[op.stage].context_parallel_exchanges)
    if (exchange.layer == op.layer)
      return std::max(0.0, seconds - exchange.hidden_flops / device_.flops_per_s * compute_slowdown(op.device));
  return seconds;
}

double CostModel::collective_duration(const Op& op, int members) const {
  if (lookup_)
    if (const std::optional<double> measured = lookup_(op)) return *measured;
  if (unit_mode_) return unit_.comm;
  if (members <= 1) return 0;
  // Ring all-reduce: a reduce-scatter and an all-gather, each n-1 steps that
  // move bytes/n per device; a reduce-scatter or an all-gather alone is one of them.
  const double n = members;
  const double passes = op_kind_facts(op.kind).ring_passes;
  return exposed_part(op, passes * (n - 1) / n * static_cast<double>(op.bytes) / device_.link_bandwidth +
                              passes * (n - 1) * device_.link_latency_s);
}

}  // namespace pipelab
