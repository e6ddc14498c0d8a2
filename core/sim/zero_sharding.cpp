#include "core/sim/zero_sharding.h"

#include <algorithm>

namespace pipelab {
namespace {

int64_t divided_up(int64_t value, int64_t parts) { return parts <= 1 ? value : (value + parts - 1) / parts; }

}  // namespace

int64_t sharded_bytes(const StageProfile& profile, int64_t bytes, int dp, int ep) {
  if (profile.params <= 0 || dp <= 1) return bytes;
  // The bytes per parameter are the same for both parts.
  const int64_t expert = profile.expert_params > 0 ? bytes / profile.params * profile.expert_params : 0;
  return divided_up(bytes - expert, dp) + divided_up(expert, std::max(1, dp / std::max(1, ep)));
}

ShardedModelStates sharded_model_states(const StageProfile& profile, int zero, int dp, int ep,
                                        int optimizer_slots, bool reshard_after_forward) {
  ShardedModelStates states;
  const int64_t weights = profile.weight_bytes();
  const int64_t gradients = profile.gradient_bytes();
  const int64_t optimizer = profile.optimizer_bytes(optimizer_slots);
  states.weights = zero >= 3 ? sharded_bytes(profile, weights, dp, ep) : weights;
  states.optimizer_state = zero >= 1 ? sharded_bytes(profile, optimizer, dp, ep) : optimizer;
  states.gradients = zero >= 2 ? sharded_bytes(profile, gradients, dp, ep) : gradients;
  if (dp <= 1) return states;
  if (zero >= 2) states.collective_buffers += std::min(gradients, static_cast<int64_t>(kGradientBucketBytes));
  if (zero >= 3)
    states.collective_buffers +=
        reshard_after_forward
            ? std::min(weights, 2 * profile.largest_layer_params * profile.precision.weight)
            : weights;
  return states;
}

}  // namespace pipelab
