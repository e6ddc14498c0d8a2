// Layer shards on one GPU in lockstep threads, each on its own context,
// whose all-gathers and reduce-scatters go through host copies: the layers'
// own handling of split sequences (sequence parallelism's tp shards, context
// parallelism's cp ranks) tested apart from the backend's collectives.
#pragma once

#include <algorithm>
#include <atomic>
#include <barrier>
#include <memory>
#include <stdexcept>
#include <vector>

#include "gpu/device/device_guard.h"
#include "gpu/layers/device_context.h"
#include "gpu/layers/layer.h"
#include "tests/gpu/gpu_test_support.h"

namespace pipelab::gpu::testing {

// The all-gather and reduce-scatter over `tp` lockstep threads (tensor-parallel
// shards or context-parallel ranks), on the host:
// every shard's staging tensor is copied down, combined, and copied back.
// A shard whose thread ends calls leave(): a shard still waiting for it in a
// collective then throws instead of waiting forever.
class LockstepSequenceCollectives {
 public:
  explicit LockstepSequenceCollectives(int tp) : tp_(tp), buffers_(tp), barrier_(tp) {}

  GpuLayer::InnerSequenceCollectives for_shard(int shard) {
    return {[this, shard](DeviceTensor& values, bool) { run(shard, values, false); },
            [this, shard](DeviceTensor& values, bool) { run(shard, values, true); }};
  }

  void leave() {
    left_ = true;
    barrier_.arrive_and_drop();
  }

 private:
  void run(int shard, DeviceTensor& values, bool sum) {
    buffers_[shard] = values.to_vector();
    barrier_.arrive_and_wait();
    // Checked here only: a shard that finished its last collective leaves
    // while the others may still be between its two barriers.
    if (left_) throw std::runtime_error("another shard ended before this collective");
    const size_t part = buffers_[shard].size() / static_cast<size_t>(tp_);
    std::vector<float> result(buffers_[shard].size(), 0.0f);
    for (int j = 0; j < tp_; ++j) {
      const std::vector<float>& from = buffers_[j];
      if (sum)
        for (size_t i = 0; i < result.size(); ++i) result[i] += from[i];
      else
        std::copy(from.begin() + j * part, from.begin() + (j + 1) * part,
                  result.begin() + j * part);
    }
    barrier_.arrive_and_wait();  // every shard has read every buffer
    values.copy_from_host(result.data());
  }

  const int tp_;
  std::vector<std::vector<float>> buffers_;
  std::barrier<> barrier_;
  std::atomic<bool> left_ = false;
};

// The same collectives over context-parallel ranks: the all-gather then hands
// every rank's slice over in a ring's order (this rank's own first, then
// r - 1, r - 2, ...).
inline GpuLayer::InnerContextCollectives as_context(GpuLayer::InnerSequenceCollectives group,
                                                    int rank, int cp) {
  return {[all_gather = group.all_gather, rank, cp](DeviceTensor& values, bool in_forward,
                                                    const SliceArrival& arrived) {
            all_gather(values, in_forward);
            if (arrived)
              for (int k = 0; k < cp; ++k) arrived((rank - k + cp) % cp);
          },
          std::move(group.reduce_scatter)};
}

// Runs shard(k, context, collectives) for k < count, each in its own thread
// on its own context of GPU 0, in lockstep through host collectives.
template <typename Shard>
void run_shards(int count, const Shard& shard) {
  std::vector<std::unique_ptr<DeviceContext>> contexts;
  for (int k = 0; k < count; ++k) contexts.push_back(std::make_unique<DeviceContext>(0));
  LockstepSequenceCollectives collectives(count);
  run_on_threads(
      count,
      [&](int k) {
        DeviceGuard guard(contexts[k]->gpu());
        shard(k, *contexts[k], collectives.for_shard(k));
      },
      [&](int, bool) { collectives.leave(); });
}

}  // namespace pipelab::gpu::testing
