// Lowering: turns a compute schedule (pp devices, F/B/BI/BW only) into the full
// per-device program for a dp x tp x pp plan: sends and receives between
// neighbouring stages, tensor-parallel all-reduces, the data-parallel gradient
// all-reduce (sync) or parameter-server push/pull (async), recomputation and the
// optimizer step.
#pragma once

#include <vector>

#include "core/plan/parallel_plan.h"
#include "core/plan/stage_profile.h"
#include "core/schedule/schedule.h"

namespace pipelab {

// `profiles` (one per stage) fill in communication bytes and the exact
// tensor-parallel all-reduces; when empty, bytes are 0 and tensor parallelism
// gets one all-reduce after each F and each B/BI.
Schedule lower_schedule(const Schedule& compute, const ParallelPlan& plan,
                        const std::vector<StageProfile>& profiles = {});

// generate_schedule + lower_schedule for a whole plan.
Schedule build_schedule(const ParallelPlan& plan, const std::vector<StageProfile>& profiles = {},
                        int steps = 0);

}  // namespace pipelab
