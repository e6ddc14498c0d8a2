// Virtual devices onto physical GPUs. A run's dp x tp x pp grid names its
// virtual devices 0 .. n-1 (replica-major, then pipeline rank, then tensor
// shard; parallel_plan.h). With at least n GPUs, virtual device d runs on GPU
// d; with fewer, each GPU takes a contiguous block of virtual devices, the
// blocks differing in size by at most one. Contiguous blocks keep neighbouring
// pipeline stages and the shards of one stage together, so most messages stay
// on one GPU. Each virtual device keeps its own streams and memory accounting
// whichever GPU it shares.
//
// Pure arithmetic: no CUDA calls (host tests check it without a GPU).
#pragma once

#include <string>
#include <vector>

#include "core/plan/parallel_plan.h"
#include "gpu/comm/rank_comm_plan.h"

namespace pipelab::gpu {

// The collective groups of a plan, each listing its virtual devices in rank
// order (device_group.h runs them): data parallelism's all-reduce (one per
// stage shard, over the replicas; only under synchronous updates, which
// parameter servers replace otherwise), tensor parallelism's (one per replica
// and pipeline rank, over the shards), and, when the model has experts
// (moe layers or blocks with experts) and ep > 1, expert parallelism's: the
// all-to-all of each group of ep consecutive replicas (per pipeline rank and
// shard; member m holds the experts of ExpertShard rank m), and under
// synchronous updates the all-reduce of the experts' gradients over the
// replicas holding the same experts (every ep-th: replicas m, m + ep, ...).
// Under context parallelism (cp > 1) the data-parallel group spans the
// replicas and their context ranks (member replica x cp + context), the
// other groups repeat per context rank, and each (replica, pipeline rank,
// shard) has a context-parallel group over its cp ranks: the attention's
// all-gather and reduce-scatter. Groups of one device are left out.
struct CollectiveGroups {
  std::vector<std::vector<int>> data_parallel;
  std::vector<std::vector<int>> tensor_parallel;
  std::vector<std::vector<int>> expert_parallel;
  std::vector<std::vector<int>> expert_data_parallel;
  std::vector<std::vector<int>> context_parallel;

  // Every group above, one list.
  std::vector<std::vector<int>> all() const;
  // The same list, each group with the collectives it runs: data
  // parallelism's and the experts' gradients an all-reduce; tensor
  // parallelism an all-reduce, and under sequence parallelism a
  // reduce-scatter and an all-gather too; expert parallelism an all-to-all;
  // context parallelism an all-gather and a reduce-scatter.
  std::vector<CollectiveGroup> with_collectives(bool sequence_parallel) const;
};
CollectiveGroups collective_groups(const ParallelPlan& plan, bool model_has_experts);

// The GPU of each virtual device. Throws std::invalid_argument when either
// count is below 1.
std::vector<int> map_virtual_devices(int virtual_devices, int gpus);

// A run over processes (core/runtime/process_share.h): a rank puts every
// virtual device it runs on one GPU, the one at position local_rank modulo
// `gpus` among the GPUs it sees, as MPI jobs usually do: with as many GPUs as
// ranks on a node every rank has its own; with fewer, ranks share them in
// turn (all ranks on one GPU works too). Throws std::invalid_argument when
// `gpus` is below 1 or `local_rank` below 0.
int gpu_for_local_rank(int local_rank, int gpus);

// The GPU of each virtual device for a rank that runs devices first_hosted ..
// first_hosted + hosted_count - 1 on `gpu` (gpu_for_local_rank): -1 for the
// devices other ranks run.
std::vector<int> map_rank_devices(int virtual_devices, int first_hosted, int hosted_count, int gpu);

// Whether `devices` (a message link's two ends, or a collective group's
// members) include one that this process does not run: `first_hosted` ..
// first_hosted + hosted_count - 1. The CUDA backend stages such tensors
// through host memory and the CPU backend's transport (cuda_backend.h).
bool crosses_processes(const std::vector<int>& devices, int first_hosted, int hosted_count);

// The virtual devices on `gpu`, in order.
std::vector<int> devices_on_gpu(const std::vector<int>& gpu_of_device, int gpu);

// Whether the virtual devices `devices` all sit on distinct GPUs (what NCCL
// needs to put them in one communicator).
bool on_distinct_gpus(const std::vector<int>& gpu_of_device, const std::vector<int>& devices);

// "0-3", "0, 2, 5", "4": a compact list of device numbers (sorted input).
std::string device_list_text(const std::vector<int>& devices);

// One line for the run's messages, e.g.
//   "8 virtual devices on 2 GPUs: devices 0-3 on GPU 0, devices 4-7 on GPU 1"
std::string describe_mapping(const std::vector<int>& gpu_of_device);

}  // namespace pipelab::gpu
