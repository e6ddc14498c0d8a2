// The JSON summary of a measured training run (what `train` prints).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "core/io/experiment.h"
#include "core/runtime/executor.h"
#include "core/trace/trace_events.h"

namespace pipelab {

// final_loss, val_accuracy, samples_per_s, step_time_ms_median,
// bubble_fraction_measured, bubble_fraction_simulated, peak_bytes per device and
// a loss array per step, computed from the recorded trace; with moe layers an
// expert_load array: per step its aux_loss and, per moe layer, the tokens
// routed to each expert and dropped.
nlohmann::ordered_json training_summary_json(const Experiment& experiment, const Trace& trace,
                                             RunState state, const std::string& error);

}  // namespace pipelab
