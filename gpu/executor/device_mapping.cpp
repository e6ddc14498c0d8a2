#include "gpu/executor/device_mapping.h"

#include <algorithm>
#include <set>
#include <stdexcept>
#include <utility>

namespace pipelab::gpu {

std::vector<int> map_virtual_devices(int virtual_devices, int gpus) {
  if (virtual_devices < 1)
    throw std::invalid_argument("a run needs at least one virtual device, got " +
                                std::to_string(virtual_devices));
  if (gpus < 1)
    throw std::invalid_argument("mapping virtual devices needs at least one GPU, got " +
                                std::to_string(gpus));
  std::vector<int> gpu_of_device(static_cast<size_t>(virtual_devices));
  // With enough GPUs this is the identity; otherwise GPU g takes devices
  // [ceil(g n / G), ceil((g+1) n / G)): blocks of floor(n/G) or ceil(n/G).
  const int used = std::min(virtual_devices, gpus);
  for (int d = 0; d < virtual_devices; ++d)
    gpu_of_device[static_cast<size_t>(d)] =
        static_cast<int>(static_cast<long long>(d) * used / virtual_devices);
  return gpu_of_device;
}

int gpu_for_local_rank(int local_rank, int gpus) {
  if (gpus < 1)
    throw std::invalid_argument("mapping a rank onto a GPU needs at least one GPU, got " +
                                std::to_string(gpus));
  if (local_rank < 0)
    throw std::invalid_argument("a local rank is at least 0, got " + std::to_string(local_rank));
  return local_rank % gpus;
}

std::vector<int> map_rank_devices(int virtual_devices, int first_hosted, int hosted_count,
                                  int gpu) {
  std::vector<int> gpu_of_device(static_cast<size_t>(virtual_devices), -1);
  for (int d = first_hosted; d < first_hosted + hosted_count; ++d)
    gpu_of_device.at(static_cast<size_t>(d)) = gpu;
  return gpu_of_device;
}

bool crosses_processes(const std::vector<int>& devices, int first_hosted, int hosted_count) {
  return std::any_of(devices.begin(), devices.end(), [&](int device) {
    return device < first_hosted || device >= first_hosted + hosted_count;
  });
}

CollectiveGroups collective_groups(const ParallelPlan& plan, bool model_has_experts) {
  CollectiveGroups groups;
  const auto device = [&plan](int replica, int rank, int shard, int context) {
    return device_id(plan, {replica, rank, shard, context});
  };
  if (plan.data_parallel_size() > 1 && plan.update == UpdateMode::Sync)
    for (int rank = 0; rank < plan.pp; ++rank)
      for (int shard = 0; shard < plan.tp; ++shard) {
        std::vector<int>& members = groups.data_parallel.emplace_back();
        for (int replica = 0; replica < plan.dp; ++replica)
          for (int context = 0; context < plan.cp; ++context)
            members.push_back(device(replica, rank, shard, context));
      }
  if (plan.tp > 1)
    for (int replica = 0; replica < plan.dp; ++replica)
      for (int rank = 0; rank < plan.pp; ++rank)
        for (int context = 0; context < plan.cp; ++context) {
          std::vector<int>& members = groups.tensor_parallel.emplace_back();
          for (int shard = 0; shard < plan.tp; ++shard)
            members.push_back(device(replica, rank, shard, context));
        }
  if (model_has_experts && plan.ep > 1) {
    // Replica-major device numbers: group g's member m is replica g ep + m.
    for (int group = 0; group < plan.dp / plan.ep; ++group)
      for (int rank = 0; rank < plan.pp; ++rank)
        for (int shard = 0; shard < plan.tp; ++shard)
          for (int context = 0; context < plan.cp; ++context) {
            std::vector<int>& members = groups.expert_parallel.emplace_back();
            for (int member = 0; member < plan.ep; ++member)
              members.push_back(device(group * plan.ep + member, rank, shard, context));
          }
    if (plan.dp > plan.ep && plan.update == UpdateMode::Sync)
      for (int member = 0; member < plan.ep; ++member)
        for (int rank = 0; rank < plan.pp; ++rank)
          for (int shard = 0; shard < plan.tp; ++shard)
            for (int context = 0; context < plan.cp; ++context) {
              std::vector<int>& holders = groups.expert_data_parallel.emplace_back();
              for (int replica = member; replica < plan.dp; replica += plan.ep)
                holders.push_back(device(replica, rank, shard, context));
            }
  }
  if (plan.cp > 1)
    for (int replica = 0; replica < plan.dp; ++replica)
      for (int rank = 0; rank < plan.pp; ++rank)
        for (int shard = 0; shard < plan.tp; ++shard) {
          std::vector<int>& members = groups.context_parallel.emplace_back();
          for (int context = 0; context < plan.cp; ++context)
            members.push_back(device(replica, rank, shard, context));
        }
  return groups;
}

std::vector<std::vector<int>> CollectiveGroups::all() const {
  std::vector<std::vector<int>> every;
  for (const auto* groups : {&data_parallel, &tensor_parallel, &expert_parallel,
                             &expert_data_parallel, &context_parallel})
    every.insert(every.end(), groups->begin(), groups->end());
  return every;
}

std::vector<CollectiveGroup> CollectiveGroups::with_collectives(bool sequence_parallel) const {
  using enum GroupCollective;
  const std::vector<GroupCollective> tensor_parallel_collectives =
      sequence_parallel ? std::vector{AllReduce, ReduceScatter, AllGather} : std::vector{AllReduce};
  std::vector<CollectiveGroup> every;
  for (const auto& [groups, collectives] :
       {std::pair{&data_parallel, std::vector{AllReduce}},
        std::pair{&tensor_parallel, tensor_parallel_collectives},
        std::pair{&expert_parallel, std::vector{AllToAll}},
        std::pair{&expert_data_parallel, std::vector{AllReduce}},
        std::pair{&context_parallel, std::vector{AllGather, ReduceScatter}}})
    for (const std::vector<int>& members : *groups) every.push_back({members, collectives});
  return every;
}

std::vector<int> devices_on_gpu(const std::vector<int>& gpu_of_device, int gpu) {
  std::vector<int> devices;
  for (size_t d = 0; d < gpu_of_device.size(); ++d)
    if (gpu_of_device[d] == gpu) devices.push_back(static_cast<int>(d));
  return devices;
}

bool on_distinct_gpus(const std::vector<int>& gpu_of_device, const std::vector<int>& devices) {
  std::set<int> gpus;
  for (int device : devices)
    if (!gpus.insert(gpu_of_device.at(static_cast<size_t>(device))).second) return false;
  return true;
}

std::string device_list_text(const std::vector<int>& devices) {
  std::string text;
  size_t i = 0;
  while (i < devices.size()) {
    size_t j = i;
    while (j + 1 < devices.size() && devices[j + 1] == devices[j] + 1) ++j;
    if (!text.empty()) text += ", ";
    text += std::to_string(devices[i]);
    if (j > i) {
      text += '-';
      text += std::to_string(devices[j]);
    }
    i = j + 1;
  }
  return text;
}

std::string describe_mapping(const std::vector<int>& gpu_of_device) {
  const int devices = static_cast<int>(gpu_of_device.size());
  int gpus = 0;
  for (int gpu : gpu_of_device) gpus = std::max(gpus, gpu + 1);
  std::string text = std::to_string(devices) + " virtual device" + (devices == 1 ? "" : "s") +
                     " on " + std::to_string(gpus) + " GPU" + (gpus == 1 ? "" : "s") + ": ";
  for (int gpu = 0; gpu < gpus; ++gpu) {
    const std::vector<int> on_gpu = devices_on_gpu(gpu_of_device, gpu);
    if (gpu > 0) text += ", ";
    text += (on_gpu.size() == 1 ? "device " : "devices ") + device_list_text(on_gpu) + " on GPU " +
            std::to_string(gpu);
  }
  return text;
}

}  // namespace pipelab::gpu
