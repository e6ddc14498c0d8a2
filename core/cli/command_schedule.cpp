// pipelab-cli schedule: each device's compute-op order for a schedule.
#include <ostream>

#include "core/cli/cli_args.h"
#include "core/cli/cli_commands.h"
#include "core/cli/plan_options.h"
#include "core/cli/simulation_report.h"
#include "core/schedule/lowering.h"
#include "core/sim/simulator.h"
#include "core/sim/timeline_text.h"
#include "core/text/quoted_excerpt.h"

namespace pipelab {

int command_schedule(const std::vector<std::string>& args, std::ostream& out) {
  const ParsedArgs parsed = parse_args("schedule", args,
                                       {{"schedule"}, {"stages"}, {"microbatches"}, {"chunks"},
                                        {"steps"}, {"format"}});
  const ParallelPlan plan = plan_from_flags(parsed);
  const int steps = parsed.get_int("steps", 0, 0, 64);
  const std::string format = parsed.get("format", "text");
  if (format != "text" && format != "json")
    throw UsageError("--format must be text or json, got " + quoted_excerpt(format));

  const Schedule schedule = build_schedule(plan, {}, steps);
  if (format == "json") {
    out << schedule_to_json(schedule).dump(2) << "\n";
    return kExitOk;
  }
  // Text: the textbook grid, one slot per unit of time (F = 1, B = 2, BI = BW = 1).
  const SimulationResult result = simulate(schedule, CostModel::unit(UnitCosts{1, 1, 1, 0, 0}));
  out << schedule_name(schedule.kind) << ": " << plan.pp << " devices, " << plan.stages()
      << " stages, " << plan.microbatches << " micro-batches";
  if (schedule.steps > 1) out << ", a window of " << schedule.steps << " steps";
  out << "\n" << format_timeline_grid(result.trace, schedule.device_count(), 1.0);
  out << "bubble fraction " << result.bubble_fraction << " (F = 1, B = 2 time units)\n";
  return kExitOk;
}

}  // namespace pipelab
