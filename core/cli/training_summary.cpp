#include "core/cli/training_summary.h"

#include <algorithm>
#include <cmath>

#include "core/cli/simulation_report.h"
#include "core/trace/bubbles.h"

namespace pipelab {
namespace {

nlohmann::ordered_json number_or_null(double value) {
  if (std::isfinite(value)) return value;
  return nullptr;
}

double median(std::vector<double> values) {
  if (values.empty()) return std::nan("");
  std::sort(values.begin(), values.end());
  const size_t mid = values.size() / 2;
  return values.size() % 2 ? values[mid] : 0.5 * (values[mid - 1] + values[mid]);
}

// Per step, each moe layer's tokens routed to each expert and dropped, and
// the auxiliary loss (already in the step's loss); null without moe layers.
nlohmann::ordered_json expert_load_json(const Trace& trace) {
  const bool has_experts =
      std::any_of(trace.steps.begin(), trace.steps.end(),
                  [](const StepMetrics& step) { return !step.expert_load.empty(); });
  if (!has_experts) return nullptr;
  nlohmann::ordered_json steps = nlohmann::ordered_json::array();
  for (const StepMetrics& step : trace.steps) {
    nlohmann::ordered_json layers = nlohmann::ordered_json::array();
    for (const ExpertLoad& load : step.expert_load)
      layers.push_back({{"layer", load.layer}, {"routed", load.routed}, {"dropped", load.dropped}});
    steps.push_back(
        {{"step", step.step}, {"aux_loss", number_or_null(step.aux_loss)}, {"layers", layers}});
  }
  return steps;
}

}  // namespace

nlohmann::ordered_json training_summary_json(const Experiment& experiment, const Trace& trace,
                                             RunState state, const std::string& error) {
  nlohmann::ordered_json json;
  json["name"] = experiment.name;
  json["status"] = run_state_name(state);
  if (!error.empty()) json["error"] = error;
  json["backend"] = experiment.backend.type;
  json["schedule"] = schedule_name(experiment.parallel.schedule);
  json["dp"] = experiment.parallel.dp;
  json["tp"] = experiment.parallel.tp;
  json["pp"] = experiment.parallel.pp;
  if (experiment.parallel.ep > 1) json["ep"] = experiment.parallel.ep;
  json["microbatches"] = experiment.parallel.microbatches;
  json["steps"] = static_cast<int>(trace.steps.size());

  std::vector<double> step_ms, measured_bubbles;
  double final_loss = std::nan(""), val_accuracy = std::nan(""), val_loss = std::nan("");
  double simulated = std::nan(""), total_time = 0;
  nlohmann::ordered_json losses = nlohmann::ordered_json::array();
  for (const StepMetrics& step : trace.steps) {
    losses.push_back(number_or_null(step.loss));
    final_loss = step.loss;
    if (std::isfinite(step.val_accuracy)) val_accuracy = step.val_accuracy;
    if (std::isfinite(step.val_loss)) val_loss = step.val_loss;
    if (std::isfinite(step.bubble_simulated)) simulated = step.bubble_simulated;
    if (std::isfinite(step.bubble_measured)) measured_bubbles.push_back(step.bubble_measured);
    step_ms.push_back(step.step_time_s * 1e3);
    total_time += step.step_time_s;
  }
  const double samples = double(experiment.training.batch_size) * trace.steps.size();
  json["final_loss"] = number_or_null(final_loss);
  json["val_loss"] = number_or_null(val_loss);
  json["val_accuracy"] = number_or_null(val_accuracy);
  json["samples_per_s"] = number_or_null(total_time > 0 ? samples / total_time : std::nan(""));
  json["step_time_ms_median"] = number_or_null(median(step_ms));
  // Median over steps: the first step pays for warm-up (page faults, caches).
  json["bubble_fraction_measured"] = number_or_null(median(measured_bubbles));
  json["bubble_fraction_simulated"] = number_or_null(simulated);

  // Peak memory per device and category, from the memory samples.
  const int devices = std::max<int>(static_cast<int>(trace.devices.size()), 1);
  std::vector<MemoryBytes> peaks(devices, MemoryBytes{});
  std::vector<int64_t> peak_totals(devices, 0);
  for (const MemorySample& sample : trace.memory) {
    if (sample.device < 0 || sample.device >= devices) continue;
    for (int c = 0; c < kMemoryCategoryCount; ++c)
      peaks[sample.device][c] = std::max(peaks[sample.device][c], sample.bytes[c]);
    peak_totals[sample.device] = std::max(peak_totals[sample.device], total_bytes(sample.bytes));
  }
  json["peak_bytes"] = nlohmann::ordered_json::array();
  for (int d = 0; d < devices; ++d) {
    nlohmann::ordered_json entry{{"device", d}};
    entry.update(memory_to_json(peaks[d], peak_totals[d]));
    json["peak_bytes"].push_back(std::move(entry));
  }
  json["loss"] = std::move(losses);
  nlohmann::ordered_json expert_load = expert_load_json(trace);
  if (!expert_load.is_null()) json["expert_load"] = std::move(expert_load);
  return json;
}

}  // namespace pipelab
