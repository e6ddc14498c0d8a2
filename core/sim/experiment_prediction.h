// Prediction: an experiment's lowered schedule, its cost model and the
// simulated run. The CLI's `simulate`, the app's predicted timeline and the
// executors' "simulated bubble" all come from here, so they agree.
#pragma once

#include <optional>
#include <vector>

#include "core/hardware/hardware_spec.h"
#include "core/io/experiment.h"
#include "core/plan/stage_profile.h"
#include "core/schedule/schedule.h"
#include "core/sim/cost_model.h"
#include "core/sim/simulator.h"

namespace pipelab {

struct Prediction {
  std::vector<StageProfile> profiles;
  Schedule schedule;  // lowered
  CostModel cost;
  SimulationResult result;
};

// Optimizer state slots per parameter: 0 plain SGD, 1 SGD with momentum, 2 Adam(W),
// plus 1 for PipeMare's weight velocity (schedule pipemare with discrepancy correction).
int optimizer_slots(const Experiment& experiment);

// The device the experiment's cost model times ops on: the cluster's device in
// its node, with bf16 GEMM peaks under mixed precision. Not for profile "unit".
DeviceProfile experiment_device(const Experiment& experiment);
// The same on a given cluster (calibration tries measured ones).
DeviceProfile cluster_device(const Experiment& experiment, const ClusterSpec& cluster);

// The cost model the experiment asks for (simulation.profile, or unit costs).
// Throws ExperimentError for an unknown profile name.
CostModel experiment_cost_model(const Experiment& experiment,
                                const std::vector<StageProfile>& profiles);
// The experiment's cost model on a given cluster: its device, placed on its node.
CostModel cluster_cost_model(const Experiment& experiment, const ClusterSpec& cluster,
                             const std::vector<StageProfile>& profiles);

// `options` with what the experiment decides of a simulation (whether gradient
// reduction overlaps the backward): every simulation of an experiment, the
// prediction's, the planner's candidates' and calibration's, takes it from here.
SimulationOptions experiment_simulation_options(const Experiment& experiment,
                                                SimulationOptions options = {});

// Builds, lowers and simulates. `unit_override` forces unit costs (CLI --cost).
// `steps` is the window length (0: the schedule's default). `options` says
// whether to record every event and memory sample (metrics come either way).
Prediction predict_experiment(const Experiment& experiment,
                              std::optional<UnitCosts> unit_override = std::nullopt, int steps = 0,
                              const SimulationOptions& options = {});

}  // namespace pipelab
