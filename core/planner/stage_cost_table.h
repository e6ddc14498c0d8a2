// StageCostTable: what every contiguous layer range of an experiment's model
// costs as one pipeline stage, in the simulator's own terms (the StageProfile
// the partitioner and profiler give that range, timed by the experiment's
// CostModel). The planners search over these ranges, so their costs are the
// simulator's.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "core/io/experiment.h"
#include "core/sim/cost_model.h"
#include "core/sim/memory_model.h"

namespace pipelab {

// One layer range [begin, end) as a stage, on one tensor-parallel shard.
struct RangeCost {
  double microbatch_s = 0;     // F + B (+ Recompute) + tensor-parallel collectives, one micro-batch
  double update_s = 0;         // the optimizer step, once per step
  int64_t gradient_bytes = 0;  // what data-parallel replicas all-reduce each step
  int64_t input_bytes = 0;     // activation received per micro-batch (0 for the first stage)
  int64_t output_bytes = 0;    // activation sent per micro-batch (0 for the last stage)
  StageMemory memory;          // weights, gradients, optimizer state, per-micro-batch activations
};

class StageCostTable {
 public:
  // The experiment's model, tp, precision, recomputation and micro-batch size
  // (training.batch_size / dp / microbatches) on its simulation.profile;
  // `link_bandwidth` (bytes/s) replaces the profile's link when given.
  // Throws ExperimentError like planning_cost_model.
  StageCostTable(const Experiment& experiment, std::optional<double> link_bandwidth = std::nullopt);

  int layer_count() const { return layer_count_; }
  const RangeCost& range(int begin, int end) const;  // 0 <= begin < end <= layer_count()

  // One point-to-point message, and a ring all-reduce over `members`, as the simulator times them.
  double message_s(int64_t bytes) const;
  double allreduce_s(int64_t bytes, int members) const;

  // Peak bytes of a device holding `range` with `inflight` micro-batches'
  // activations and `weight_versions` versions of its weights (1 for
  // synchronous schedules), its stage replicated over `replicas` devices, as
  // the simulator's memory model counts them (with the runtime's own memory:
  // core/sim/runtime_memory.h).
  int64_t device_bytes(const RangeCost& range, int inflight, int weight_versions,
                       int replicas) const;

  const DeviceProfile& device() const { return cost_.device(); }

 private:
  int index(int begin, int end) const { return begin * (layer_count_ + 1) + end; }

  int layer_count_ = 0;
  bool recompute_ = false;
  int tp_ = 1, cp_ = 1;  // the experiment's, which the planners keep
  CostModel cost_;
  std::vector<RangeCost> ranges_;  // by index(begin, end); only begin < end filled
};

}  // namespace pipelab
