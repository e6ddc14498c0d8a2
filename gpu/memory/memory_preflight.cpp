#include "gpu/memory/memory_preflight.h"

#include <algorithm>
#include <cassert>
#include <stdexcept>

#include "core/io/experiment_prediction.h"
#include "core/plan/stage_profile.h"
#include "core/schedule/lowering.h"
#include "core/sim/simulator.h"
#include "gpu/executor/device_mapping.h"
#include "gpu/memory/out_of_memory.h"

namespace pipelab::gpu {

std::string device_profile_name_for_gpu(const std::string& gpu_name) {
  return gpu_name.find("H100") != std::string::npos ? "h100" : "h200";
}

std::vector<int64_t> estimate_device_bytes(const Experiment& experiment,
                                           const DeviceProfile& profile, int64_t workspace_bytes) {
  const ParallelPlan& plan = experiment.parallel;
  const std::vector<StageProfile> profiles =
      profile_stages(experiment.model, plan, microbatch_size(experiment));
  const Schedule schedule = build_schedule(plan, profiles);
  const CostModel cost =
      CostModel::from_profiles(profiles, profile, optimizer_slots(experiment.training.optimizer));
  SimulationOptions options;
  options.record_events = false;
  options.record_memory = false;
  const SimulationResult simulated = simulate(schedule, cost, options);

  const bool staged_all_reduce = plan.dp > 1 && plan.update == UpdateMode::Sync;
  std::vector<int64_t> needed(static_cast<size_t>(plan.devices()), 0);
  for (int d = 0; d < plan.devices(); ++d) {
    const int64_t peak = simulated.per_device[static_cast<size_t>(d)].peak_total_bytes;
    int64_t staging = 0;
    if (staged_all_reduce) {
      // The all-reduce flattens one stage's gradients at a time: the largest chunk's.
      const int rank = device_coord(plan, d).pipeline_rank;
      for (int chunk = 0; chunk < plan.chunks; ++chunk) {
        const int stage = plan.layout().stage_of(rank, chunk);
        staging = std::max(staging, profiles[static_cast<size_t>(stage)].params *
                                        static_cast<int64_t>(sizeof(float)));
      }
    }
    needed[static_cast<size_t>(d)] =
        peak + workspace_bytes + staging + peak * kEstimateMarginPercent / 100;
  }
  return needed;
}

std::vector<GpuShortfall> find_memory_shortfalls(const std::vector<int64_t>& needed_per_device,
                                                 const std::vector<int>& gpu_of_device,
                                                 const std::vector<int64_t>& free_per_gpu) {
  if (needed_per_device.size() != gpu_of_device.size())
    throw std::invalid_argument("memory check: " + std::to_string(needed_per_device.size()) +
                                " estimates for " + std::to_string(gpu_of_device.size()) +
                                " virtual devices");
  std::vector<GpuShortfall> shortfalls;
  for (int gpu = 0; gpu < static_cast<int>(free_per_gpu.size()); ++gpu) {
    GpuShortfall candidate;
    candidate.gpu = gpu;
    candidate.devices = devices_on_gpu(gpu_of_device, gpu);
    candidate.free_bytes = free_per_gpu[static_cast<size_t>(gpu)];
    for (int device : candidate.devices)
      candidate.needed_bytes += needed_per_device[static_cast<size_t>(device)];
    if (!candidate.devices.empty() && candidate.needed_bytes > candidate.free_bytes)
      shortfalls.push_back(std::move(candidate));
  }
  return shortfalls;
}

std::string memory_shortfall_message(const std::vector<GpuShortfall>& shortfalls,
                                     const std::vector<int64_t>& needed_per_device) {
  assert(!shortfalls.empty());
  std::string text = "the split does not fit in GPU memory: ";
  for (size_t i = 0; i < shortfalls.size(); ++i) {
    const GpuShortfall& shortfall = shortfalls[i];
    if (i > 0) text += "; ";
    text += "GPU " + std::to_string(shortfall.gpu) + " (virtual device" +
            (shortfall.devices.size() == 1 ? " " : "s ") + device_list_text(shortfall.devices) +
            ") needs " + format_bytes(shortfall.needed_bytes);
    if (shortfall.devices.size() > 1) {
      int largest = shortfall.devices.front();
      for (int device : shortfall.devices)
        if (needed_per_device[static_cast<size_t>(device)] >
            needed_per_device[static_cast<size_t>(largest)])
          largest = device;
      text += " (the largest, device " + std::to_string(largest) + ", " +
              format_bytes(needed_per_device[static_cast<size_t>(largest)]) + ")";
    }
    text += " but has " + format_bytes(shortfall.free_bytes) + " free";
  }
  text +=
      "; use more pipeline stages (parallel.pp) or tensor shards (parallel.tp), "
      "parallel.recompute = true, a schedule with fewer micro-batches in flight (1f1b rather "
      "than gpipe), a smaller batch or model, or backend.type = cpu";
  return text;
}

}  // namespace pipelab::gpu
