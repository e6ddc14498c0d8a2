#include "core/model/mixture_of_experts.h"

#include <algorithm>
#include <cmath>

namespace pipelab {

int64_t expert_capacity(double capacity_factor, int64_t tokens, int64_t top_k, int64_t experts) {
  const double slots = std::ceil(capacity_factor * static_cast<double>(tokens * top_k) /
                                 static_cast<double>(experts));
  return std::max<int64_t>(1, static_cast<int64_t>(slots));
}

int64_t expert_major_block(int64_t block, int64_t members, int64_t local_experts) {
  const int64_t member = block / local_experts;
  const int64_t local = block % local_experts;
  return local * members + member;
}

MoeCost moe_cost(const MoeShape& shape, int tp) {
  const int64_t h = shape.dim;
  const int64_t e = shape.experts;
  const int64_t f = shape.ffn / tp;  // each expert's hidden columns on this shard
  MoeCost cost;
  // W1, b1 and W2 split over the shards, b2 whole on each.
  cost.expert_params = e * (h * f + f + f * h + h);
  cost.params = h * e + cost.expert_params;  // the gate has no bias, as Switch's
  const double tokens = static_cast<double>(shape.tokens);
  const double k = static_cast<double>(shape.top_k);
  const double gate = 2.0 * static_cast<double>(h * e);          // per token, each direction
  const double expert_gemms = 4.0 * static_cast<double>(h * f);  // two GEMMs per token
  // GELU: 8 FLOPs forward, 12 backward per hidden value (model_spec.cpp's table);
  // softmax and routing are a few per gate value.
  cost.forward_flops =
      tokens * (gate + 5.0 * static_cast<double>(e) +
                k * (expert_gemms + 8.0 * static_cast<double>(f) + static_cast<double>(f + h)));
  cost.backward_input_flops = tokens * (gate + 5.0 * static_cast<double>(e) +
                                        k * (expert_gemms + 12.0 * static_cast<double>(f)));
  cost.backward_weight_flops = tokens * (gate + k * (expert_gemms + static_cast<double>(f + h)));
  // Each token's gate probabilities, and per expert slot (capacity_factor x
  // top_k per token) the dispatched input, the shard's hidden pre-activation
  // and the expert's (summed) output for the combine's gate gradient; the
  // layer input is counted by the stage.
  const double slots = shape.capacity_factor * k;
  cost.kept_values =
      shape.tokens * e +
      static_cast<int64_t>(std::ceil(tokens * slots * static_cast<double>(2 * h + f)));
  cost.backward_working_values =
      static_cast<int64_t>(std::ceil(tokens * slots * static_cast<double>(3 * h)));
  return cost;
}

}  // namespace pipelab
