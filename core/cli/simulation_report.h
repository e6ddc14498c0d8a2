// JSON forms of schedules and simulation results, as pipelab-cli prints them.
#pragma once

#include <nlohmann/json.hpp>

#include "core/schedule/schedule.h"
#include "core/sim/simulator.h"
#include "core/sim/throughput.h"

namespace pipelab {

// {"schedule":..., "stages":P, "microbatches":M, "devices":[{"device":0,
//  "ops":[{"kind":"F","stage":0,"microbatch":0}, ...]}, ...]}: compute ops only.
nlohmann::ordered_json schedule_to_json(const Schedule& schedule);

// The summary `simulate` prints: makespan, bubble fractions, per-device peaks.
nlohmann::ordered_json simulation_to_json(const Schedule& schedule, const SimulationResult& result);

// {"device": "h100", "node": "dgx-h100", "nodes": 16, "model_flops_per_step": ...,
//  "step_time": s, "achieved_tflops_per_device": ..., "peak_tflops_per_device": ..., "mfu": 0.41}
nlohmann::ordered_json throughput_to_json(const Experiment& experiment, const Throughput& throughput);

// {"weights": n, ..., "total": n}
nlohmann::ordered_json memory_to_json(const MemoryBytes& bytes, int64_t total);

}  // namespace pipelab
