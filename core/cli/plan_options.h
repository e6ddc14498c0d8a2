// The plan flags shared by `schedule` and `simulate`:
// --schedule NAME --stages P --microbatches M [--chunks V] [--dp D] [--tp T] ...
#pragma once

#include <string>

#include "core/cli/cli_args.h"
#include "core/plan/parallel_plan.h"
#include "core/sim/cost_model.h"

namespace pipelab {

// Throws UsageError naming the missing or bad flag.
ParallelPlan plan_from_flags(const ParsedArgs& parsed);

// "f=1,b=1,w=1,comm=0,u=0" (any subset; the rest keep their defaults).
UnitCosts parse_unit_costs(const std::string& text);

}  // namespace pipelab
