#include "gpu/comm/comm_world.h"

#include <algorithm>
#include <set>
#include <stdexcept>
#include <string>

#include "core/comm/run_control.h"
#ifdef PIPELAB_HAVE_NCCL
#include "gpu/comm/rank_world.h"
#endif

namespace pipelab::gpu {

std::vector<std::vector<int>> nccl_gpu_sets(const std::vector<std::vector<int>>& device_groups,
                                            const std::vector<int>& gpu_of_device) {
  std::set<std::vector<int>> sets;
  for (const std::vector<int>& devices : device_groups) {
    std::vector<int> gpus;
    for (int device : devices) gpus.push_back(gpu_of_device.at(static_cast<size_t>(device)));
    std::sort(gpus.begin(), gpus.end());
    const bool distinct = std::adjacent_find(gpus.begin(), gpus.end()) == gpus.end();
    if (gpus.size() >= 2 && distinct) sets.insert(std::move(gpus));
  }
  return {sets.begin(), sets.end()};
}

std::vector<int> nccl_communicators_per_gpu(const std::vector<std::vector<int>>& sets, int gpus) {
  std::vector<int> count(static_cast<size_t>(gpus), 0);
  std::set<int> world;
  for (const std::vector<int>& set : sets)
    for (int gpu : set) {
      ++count.at(static_cast<size_t>(gpu));
      world.insert(gpu);
    }
  const std::vector<int> world_set(world.begin(), world.end());
  const bool world_is_a_set = std::find(sets.begin(), sets.end(), world_set) != sets.end();
  if (!world_is_a_set)
    for (int gpu : world) ++count[static_cast<size_t>(gpu)];
  return count;
}

CommWorld::CommWorld(std::vector<int> gpus) : gpus_(std::move(gpus)) {
  std::sort(gpus_.begin(), gpus_.end());
  gpus_.erase(std::unique(gpus_.begin(), gpus_.end()), gpus_.end());
}

CommWorld::~CommWorld() {
#ifdef PIPELAB_HAVE_NCCL
  split_.clear();  // children before the world they were split from
  world_.reset();
#endif
}

std::unique_lock<std::timed_mutex> CommWorld::lock_for_launch() {
  std::unique_lock<std::timed_mutex> lock(launch_);
  if (aborted_) throw RunStopped{};
#ifdef PIPELAB_HAVE_NCCL
  // Cheap (a flag per communicator), and without it an asynchronous NCCL
  // error would only show as a hang.
  for (const auto& [gpus, group] : split_) group->check_async_errors();
  if (world_) world_->check_async_errors();
  if (between_ranks_) between_ranks_->check_async_errors();
#endif
  return lock;
}

#ifdef PIPELAB_HAVE_NCCL
const NcclGroup& CommWorld::group(std::vector<int> gpus) {
  std::sort(gpus.begin(), gpus.end());
  for (int gpu : gpus)
    if (!std::binary_search(gpus_.begin(), gpus_.end(), gpu))
      throw std::invalid_argument("GPU " + std::to_string(gpu) + " is not one of the run's GPUs");
  std::lock_guard<std::timed_mutex> lock(launch_);
  if (!world_) world_ = std::make_unique<NcclGroup>(gpus_);
  if (gpus == gpus_) return *world_;
  std::unique_ptr<NcclGroup>& group = split_[gpus];
  if (!group) group = std::make_unique<NcclGroup>(*world_, gpus);
  return *group;
}
#endif

int CommWorld::communicators() const {
  std::lock_guard<std::timed_mutex> lock(launch_);
#ifdef PIPELAB_HAVE_NCCL
  return static_cast<int>(split_.size()) + (world_ ? 1 : 0);
#else
  return 0;
#endif
}

void CommWorld::attach(RankWorld* between_ranks) {
  std::lock_guard<std::timed_mutex> lock(launch_);
  between_ranks_ = between_ranks;
}

void CommWorld::abort() noexcept {
  std::unique_lock<std::timed_mutex> lock(launch_, std::defer_lock);
  (void)lock.try_lock_for(kAbortLockWait);  // stuck launch: abort anyway
  if (aborted_.exchange(true)) return;
#ifdef PIPELAB_HAVE_NCCL
  for (auto& [gpus, group] : split_) group->abort();
  if (world_) world_->abort();
  if (between_ranks_) between_ranks_->abort();
#endif
}

bool CommWorld::aborted() const { return aborted_; }

}  // namespace pipelab::gpu
