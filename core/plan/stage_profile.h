// StageProfile: what one pipeline stage (one tensor-parallel shard of it) holds
// and costs per micro-batch. The lowering pass reads its byte counts, the
// simulator its FLOPs and memory.
#pragma once

#include <cstdint>
#include <vector>

#include "core/model/model_spec.h"
#include "core/plan/parallel_plan.h"
#include "core/plan/partition.h"

namespace pipelab {

// A tensor-parallel all-reduce Megatron's split implies: after the forward of
// each row-parallel linear, and after the input-gradient of each
// column-parallel linear.
struct TensorParallelAllReduce {
  int layer = 0;             // the linear layer it belongs to
  int64_t bytes = 0;         // per micro-batch
  bool in_forward = true;    // forward (row-parallel output) or backward (column-parallel input grad)
};

struct StageProfile {
  LayerRange layers;
  // Per micro-batch, per tensor-parallel shard.
  double forward_flops = 0;
  double backward_input_flops = 0;
  double backward_weight_flops = 0;
  int64_t params = 0;              // trainable scalars held by one shard
  int64_t activation_bytes = 0;    // kept from forward to backward, per micro-batch
  int64_t input_bytes = 0;         // activation received from the previous stage, per micro-batch
  int64_t output_bytes = 0;        // activation sent to the next stage, per micro-batch
  std::vector<TensorParallelAllReduce> tp_allreduces;
};

// One profile per pipeline stage (plan.stages() of them), for micro-batches of
// `microbatch_size` samples. Throws std::invalid_argument like partition_layers.
std::vector<StageProfile> profile_stages(const ModelSpec& model, const ParallelPlan& plan,
                                         int64_t microbatch_size);

}  // namespace pipelab
