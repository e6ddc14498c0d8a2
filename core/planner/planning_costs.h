// The simulator's costs as the planners read them: the experiment's cost
// model (with the link replaced when asked) and one stage's time per
// micro-batch under it.
#pragma once

#include <optional>
#include <vector>

#include "core/io/experiment.h"
#include "core/plan/stage_profile.h"
#include "core/sim/cost_model.h"

namespace pipelab {

// An op of `stage` carrying `bytes`, to ask the cost model how long it takes.
Op stage_op(OpKind kind, int stage, int64_t bytes = 0);

// experiment_cost_model, with the device's link_bandwidth replaced by
// `link_bandwidth` (bytes/s) when given. Throws ExperimentError for the
// "unit" profile, which counts no bytes or seconds to plan with.
CostModel planning_cost_model(const Experiment& experiment,
                              const std::vector<StageProfile>& profiles,
                              std::optional<double> link_bandwidth);

// What one micro-batch costs stage `stage` on one of its devices: its F and
// B, its Recompute under full recomputation, and its tensor-parallel
// collectives over `tp` shards, each timed as the simulator times the op.
double stage_microbatch_s(const CostModel& cost, int stage, int tp, bool recompute);

}  // namespace pipelab
