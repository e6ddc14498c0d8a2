// Plan for me: runs a planner on an experiment for a given cluster and turns
// its answer into an experiment PipeLab can run (uniform dp x pp), simulated.
// The CLI's `plan` and the app's "Plan for me..." both come here.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/io/experiment.h"
#include "core/planner/pipedream_planner.h"

namespace pipelab {

enum class PlannerKind { Dapple, PipeDream };
const char* planner_name(PlannerKind kind);
std::optional<PlannerKind> parse_planner(const std::string& name);
const char* planner_description(PlannerKind kind);  // one line, for help and the app

struct PlanRequest {
  PlannerKind planner = PlannerKind::Dapple;
  int devices = 0;                       // in all, a multiple of parallel.tp
  int64_t memory_per_device = 0;         // bytes
  std::optional<double> link_bandwidth;  // bytes/s; the profile's link when empty
};

struct PlanProposal {
  PlannerKind planner = PlannerKind::Dapple;
  // The planner's own answer: stages with their layers and replicas. Under
  // PipeDream, the times and bytes are its dynamic program's terms; under
  // DAPPLE, the simulator's step and peaks.
  PlannedPipeline optimum;
  Experiment experiment;                  // the runnable plan (uniform dp x pp), to apply or write
  double predicted_step_s = 0;            // the simulator on `experiment`
  std::vector<int64_t> stage_peak_bytes;  // the simulator on `experiment`, per stage
  std::string note;  // what the runnable plan gives up, if anything; else empty
  // DAPPLE: the (pp, dp, m) candidates that passed validation, and how many
  // of them its bounds let through to the simulator. 0 under PipeDream.
  int candidates = 0;
  int simulated = 0;
};

// Throws ExperimentError with one line saying what to change: devices below
// tp or not a multiple of it, memory below what any plan needs (naming the
// smallest that works), a unit profile, a bandwidth <= 0.
PlanProposal propose_plan(const Experiment& experiment, const PlanRequest& request);

// A time as the planners' messages write it: "76.38 ms" (four significant digits).
std::string milliseconds_text(double seconds);
// A step time: milliseconds below a second ("12 ms"), else seconds ("16.19 s").
std::string step_time_text(double seconds);
// A share as a percentage with one decimal: 0.123 -> "12.3%".
std::string percent_text(double share);

}  // namespace pipelab
