// ZeRO's arithmetic of model states (Rajbhandari et al., "ZeRO: Memory
// Optimizations Toward Training Trillion Parameter Models", SC 2020, section
// 5.1 and Figure 1): what one device holds of its stage's weights, gradients
// and optimizer state when its data-parallel group of N shares them out.
// Under mixed-precision Adam (2 + 2 + 12 bytes per parameter) that is
//   zero 0: 16        zero 1: 4 + 12 / N     zero 2: 2 + 14 / N     zero 3: 16 / N
// per parameter, plus the collectives' buffers the sharded stages need, which
// the memory curves show as comm buffers:
//   - zero 2 and 3: a reduce-scatter's bucket of whole gradients (the
//     backward writes whole gradients into a bucket, which the reduce-scatter
//     turns into the shard), kGradientBucketBytes or the stage's gradients if
//     fewer;
//   - zero 3: the gathered units, FSDP's all-gather outputs: the unit that
//     runs and the one prefetched, each the stage's largest layer (a
//     Transformer block), or the whole stage if that is less.
// The simulator holds these buffers for the whole run: the peak it reports is
// the one FSDP reaches, though between units the gathered ones are freed.
// An expert's state is shared only among the dp / ep replicas that hold the
// same experts (expert data parallelism), the rest among all dp.
#pragma once

#include <cstdint>

#include "core/plan/stage_profile.h"

namespace pipelab {

// Megatron-LM's DDP buckets hold 40 million gradient elements: 160 MB of fp32.
inline constexpr double kGradientBucketBytes = 160e6;

struct ShardedModelStates {
  int64_t weights = 0;             // the device's own (all of them below zero 3)
  int64_t gradients = 0;           // from the first gradient op to the update
  int64_t optimizer_state = 0;     // master weights and slots
  int64_t collective_buffers = 0;  // zero 2, 3: the gradient bucket; zero 3: the gathered units
};

// `optimizer_slots`: the optimizer's state values per parameter (Adam 2).
// `reshard_after_forward` false (zero 3): the gathered weights stay from a
// forward to its backward, all of the stage's at once.
ShardedModelStates sharded_model_states(const StageProfile& profile, int zero, int dp, int ep,
                                        int optimizer_slots, bool reshard_after_forward = true);

// One device's share of `bytes` (whole, over the stage's params) split as the
// params are: the dense part over dp, the experts' over dp / ep. Rounded up.
int64_t sharded_bytes(const StageProfile& profile, int64_t bytes, int dp, int ep);

}  // namespace pipelab
