#include "core/cli/simulation_report.h"

#include <cmath>
#include <vector>

#include "core/io/hardware_catalogue.h"
#include "core/sim/bubble_formula.h"
#include "core/sim/communication_volume.h"

namespace pipelab {
namespace {

// JSON has no NaN; an undefined value is null.
nlohmann::ordered_json number_or_null(double value) {
  if (std::isfinite(value)) return value;
  return nullptr;
}

}  // namespace

nlohmann::ordered_json schedule_to_json(const Schedule& schedule) {
  nlohmann::ordered_json json;
  json["schedule"] = schedule_name(schedule.kind);
  json["stages"] = schedule.stages();
  json["microbatches"] = schedule.microbatches;
  if (schedule.chunks > 1) json["chunks"] = schedule.chunks;
  json["steps"] = schedule.steps;
  json["devices"] = nlohmann::ordered_json::array();
  for (int device = 0; device < schedule.device_count(); ++device) {
    nlohmann::ordered_json ops = nlohmann::ordered_json::array();
    for (const Op& op : schedule.devices[device]) {
      if (!is_compute(op.kind) || op.kind == OpKind::Recompute) continue;
      nlohmann::ordered_json entry{{"kind", op_kind_name(op.kind)}, {"stage", op.stage}};
      if (op.microbatch >= 0) entry["microbatch"] = op.microbatch;
      if (schedule.chunks > 1) entry["chunk"] = op.chunk;
      if (schedule.steps > 1) entry["step"] = op.step;
      if (is_asynchronous(schedule.kind) || op.kind == OpKind::Update)
        entry["weight_version"] = op.weight_version;
      if (op.weight_delay > 0) entry["weight_delay"] = op.weight_delay;
      ops.push_back(std::move(entry));
    }
    json["devices"].push_back({{"device", device}, {"ops", std::move(ops)}});
  }
  return json;
}

nlohmann::ordered_json memory_to_json(const MemoryBytes& bytes, int64_t total) {
  nlohmann::ordered_json json = nlohmann::ordered_json::object();
  for (int category = 0; category < kMemoryCategoryCount; ++category)
    json[memory_category_name(static_cast<MemoryCategory>(category))] = bytes[category];
  json["total"] = total;
  return json;
}

nlohmann::ordered_json simulation_to_json(const Schedule& schedule, const SimulationResult& result) {
  nlohmann::ordered_json json;
  json["schedule"] = schedule_name(schedule.kind);
  json["pp"] = schedule.pp;
  json["dp"] = schedule.dp;
  json["tp"] = schedule.tp;
  if (schedule.ep > 1) json["ep"] = schedule.ep;
  if (schedule.cp > 1) json["cp"] = schedule.cp;
  json["zero"] = schedule.zero;
  json["chunks"] = schedule.chunks;
  json["stages"] = schedule.stages();
  json["microbatches"] = schedule.microbatches;
  json["steps"] = schedule.steps;
  json["recompute"] = schedule.recompute;
  json["offload"] = offload_name(schedule.offload);
  json["update"] = update_name(schedule.update);
  json["time_unit"] = result.trace.time_unit;
  // Unit-cost runs have no model: memory is counted in units (1 per stage's
  // weights, 1 per in-flight micro-batch's activations).
  json["memory_unit"] = result.trace.time_unit == "unit" ? "units" : "bytes";
  json["makespan"] = result.makespan;
  json["bubble_fraction"] = number_or_null(result.bubble_fraction);
  json["bubble_fraction_theory"] = number_or_null(result.bubble_fraction_theory);
  json["bubble_formula"] = bubble_formula_text(schedule.kind);
  json["bubble_formula_filled"] =
      bubble_formula_filled(schedule.kind, schedule.pp, schedule.microbatches, schedule.chunks,
                            result.formula_costs);
  json["microbatches_per_time"] = number_or_null(result.microbatches_per_time);
  json["per_device"] = nlohmann::ordered_json::array();
  // A schedule of replica 0 alone (Schedule::first_replica_only) stands for
  // every replica: synchronous replicas run alike, so each is listed with
  // replica 0's figures at its own place (devices are numbered replica-major).
  const int replicas = schedule.first_replica_only ? schedule.dp : 1;
  const int replica_devices = schedule.tp * schedule.cp * schedule.pp;
  // Bytes (0 under unit costs) each simulated device sends per step, by group.
  std::vector<CommunicationVolume> sent_per_step;
  for (const DeviceSimStats& stats : result.per_device)
    sent_per_step.push_back(communication_per_step(schedule, stats.device));
  for (int replica = 0; replica < replicas; ++replica)
    for (size_t d = 0; d < result.per_device.size(); ++d) {
      const DeviceSimStats& stats = result.per_device[d];
      nlohmann::ordered_json device;
      const int id = replica * replica_devices + stats.device;
      device["device"] = id;
      if (id < static_cast<int>(result.trace.devices.size()))
        device["label"] = result.trace.devices[id].label;
      device["busy"] = stats.busy;
      device["comm"] = stats.comm;
      device["bubble_fraction"] = number_or_null(stats.bubble_fraction);
      device["peak_bytes"] = memory_to_json(stats.peak_bytes, stats.peak_total_bytes);
      device["peak_inflight_microbatches"] = stats.peak_inflight_microbatches;
      device["weight_versions"] = stats.weight_versions;
      const CommunicationVolume& sent = sent_per_step[d];
      device["sent_bytes_per_step"] = {{"data_parallel", sent.data_parallel},
                                       {"tensor_parallel", sent.tensor_parallel},
                                       {"expert_parallel", sent.expert_parallel},
                                       {"context_parallel", sent.context_parallel},
                                       {"pipeline", sent.pipeline}};
      json["per_device"].push_back(std::move(device));
    }
  return json;
}

nlohmann::ordered_json throughput_to_json(const Experiment& experiment, const Throughput& throughput) {
  const ClusterSpec cluster = experiment_cluster(experiment);
  nlohmann::ordered_json json;
  json["device"] = cluster.device.id;
  json["node"] = cluster.node.id;
  json["nodes"] = cluster.nodes;
  json["devices"] = throughput.devices;
  json["model_flops_per_step"] = throughput.model_flops_per_step;
  json["step_time"] = throughput.step_seconds;
  json["achieved_tflops_per_device"] = throughput.achieved_flops_per_device / 1e12;
  json["peak_tflops_per_device"] = throughput.peak_flops_per_device / 1e12;
  json["mfu"] = number_or_null(throughput.mfu);
  return json;
}

}  // namespace pipelab
