// PipeDream's planner (Narayanan et al., "PipeDream: Generalized Pipeline
// Parallelism for DNN Training", SOSP 2019, section 3.1): contiguous layer
// ranges as stages, each replicated over some device groups, chosen by a
// dynamic program to make the slowest stage as fast as possible within a
// memory limit per device.
//
// A device group is tp devices (the experiment's tensor-parallel degree
// stays as it is). For a step of M micro-batches, a stage holding layers
// [i, j) on r replicas, with S groups from it to the last stage, takes
//   time(i, j, r) = max( (M / r) * compute(i, j) + allreduce(gradients(i, j), r) + update(i, j),
//                        (M / r) * message(activation into layer i),
//                        (M / r) * message(activation out of layer j) )
// (sends run beside compute; a boundary between stages of r and r' replicas
// is as slow as the side with fewer), and each of its devices holds
//   memory(i, j, r, S) = the range's weights x k versions + gradients + optimizer state
//                        + k micro-batches' activations,   k = ceil(S / r)
// (PipeDream's 1F1B keeps as many micro-batches in flight, and stashes as
// many weight versions, as there are groups from the stage to the end, over
// its replicas). With best(i, S) the slowest stage of the best plan for
// layers [i, L) on exactly S groups:
//   best(L, 0) = 0
//   best(i, S) = min over j in (i, L], r in [1, S] with S - r groups left for [j, L)
//                of max(time(i, j, r), best(j, S - r)),   skipping memory(i, j, r, S) > limit
// and the plan is the S <= groups with the smallest best(0, S) (fewest groups on ties).
#pragma once

#include <cstdint>
#include <vector>

#include "core/plan/partition.h"
#include "core/planner/stage_cost_table.h"

namespace pipelab {

struct PlannedStage {
  LayerRange layers;
  int replicas = 1;          // device groups that each run the whole stage
  double step_s = 0;         // time(i, j, r) above
  int64_t device_bytes = 0;  // memory(i, j, r, S) above, per device
};

struct PlannedPipeline {
  std::vector<PlannedStage> stages;  // empty when no plan fits
  double slowest_stage_s = 0;        // the objective: max of the stages' step_s
  int groups = 0;                    // device groups used
  int64_t peak_device_bytes = 0;     // max of the stages' device_bytes

  bool found() const { return !stages.empty(); }
  bool uniform() const;  // every stage on the same number of replicas
};

// The two terms above, for exhaustive searches and reports.
double pipedream_stage_s(const StageCostTable& table, LayerRange layers, int replicas,
                         int microbatches);
int64_t pipedream_stage_bytes(const StageCostTable& table, LayerRange layers, int replicas,
                              int groups_from_here);
// A whole plan's stages with their terms filled in.
PlannedPipeline pipedream_evaluate(const StageCostTable& table,
                                   const std::vector<LayerRange>& layers,
                                   const std::vector<int>& replicas, int microbatches);

// The optimum over any replication, on at most `groups` device groups.
// Not found() when nothing fits `memory_per_device`.
PlannedPipeline plan_pipedream(const StageCostTable& table, int groups, int64_t memory_per_device,
                               int microbatches);
// The best plan PipeLab can run: every stage on the same number of replicas
// (data parallel dp x pipeline pp), dp dividing the step's micro-batches.
PlannedPipeline plan_pipedream_uniform(const StageCostTable& table, int groups,
                                       int64_t memory_per_device, int microbatches);
// The smallest memory per device any plan on at most `groups` groups needs
// (only uniform plans when `uniform_only`).
int64_t pipedream_minimum_memory(const StageCostTable& table, int groups, int microbatches,
                                 bool uniform_only);

}  // namespace pipelab
