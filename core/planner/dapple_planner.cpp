#include "core/planner/dapple_planner.h"

#include <algorithm>
#include <limits>
#include <numeric>
#include <optional>

#include "core/io/experiment_io.h"
#include "core/plan/plan_limits.h"
#include "core/plan/stage_profile.h"
#include "core/planner/planning_costs.h"
#include "core/schedule/lowering.h"
#include "core/sim/experiment_prediction.h"
#include "core/sim/memory_model.h"
#include "core/sim/runtime_memory.h"
#include "core/sim/simulator.h"

namespace pipelab {
namespace {

// A (pp, dp, m) not yet simulated, with what it cannot beat.
struct Pending {
  Experiment experiment;  // its split written out as stage starts, so it is searched once per pp
  double step_bound_s = 0;
  int64_t memory_bound = 0;
};

// Faster first; fewer devices, then fewer micro-batches, on ties.
bool better(const DappleCandidate& a, const DappleCandidate& b) {
  if (a.step_s != b.step_s) return a.step_s < b.step_s;
  if (a.dp * a.pp != b.dp * b.pp) return a.dp * a.pp < b.dp * b.pp;
  return a.microbatches < b.microbatches;
}

// Bounds from the candidate's stage costs. Stage s does m micro-batches' F
// and B itself; before that, micro-batch 0 must go forward through every
// earlier stage, and after it, the last gradient must go back through them,
// while the stage all-reduces its gradients over its dp replicas and steps
// its optimizer: step >= max over s of m * cost(s) + max(sum over k < s of
// cost(k), allreduce(s) + update(s)), dropping the forward chain from the
// second. Each device holds at least its stage's weights, gradients and
// optimizer state.
void bound(Pending& entry, std::optional<double> link_bandwidth) {
  const Experiment& experiment = entry.experiment;
  const ParallelPlan& plan = experiment.parallel;
  const std::vector<StageProfile> profiles =
      profile_stages(experiment.model, plan, microbatch_size(experiment),
                     experiment.training.precision, experiment.training.fp32_gradients);
  const CostModel cost = planning_cost_model(experiment, profiles, link_bandwidth);
  double earlier_stages_s = 0;
  for (int s = 0; s < plan.pp; ++s) {
    const double stage_s = stage_microbatch_s(cost, s, plan.tp, plan.recompute);
    const double after_last_backward_s =
        cost.collective_duration(stage_op(OpKind::AllReduce, s, profiles[s].gradient_bytes()),
                                 plan.dp) +
        cost.duration(stage_op(OpKind::Update, s));
    entry.step_bound_s =
        std::max(entry.step_bound_s,
                 plan.microbatches * stage_s + std::max(earlier_stages_s, after_last_backward_s));
    earlier_stages_s += stage_s;
    const StageMemory memory = stage_memory(cost, s);
    entry.memory_bound =
        std::max(entry.memory_bound, memory.weights + memory.gradients + memory.optimizer_state);
  }
  // What CUDA, cuBLAS and NCCL hold on every device, as the simulator counts it.
  if (!cost.is_unit()) entry.memory_bound += runtime_memory_bytes(plan, cost.device());
}

// The divisors of `n` that are at most `most`, ascending.
std::vector<int> divisors(int64_t n, int64_t most) {
  std::vector<int> low, high;
  for (int64_t d = 1; d * d <= n; ++d) {
    if (n % d != 0) continue;
    if (d <= most) low.push_back(static_cast<int>(d));
    if (n / d != d && n / d <= most) high.push_back(static_cast<int>(n / d));
  }
  low.insert(low.end(), high.rbegin(), high.rend());
  return low;
}

// Past this many (pp, dp, m) to validate and bound, the search takes seconds.
constexpr int64_t kMaxCandidates = 100000;

// Every valid (pp, dp, m) on `groups` device groups, bounded: dp divides the
// batch, m the per-replica batch.
std::vector<Pending> candidates(const Experiment& experiment, int groups,
                                std::optional<double> link_bandwidth) {
  const int64_t batch = experiment.training.batch_size;
  const int most_stages =
      std::min({groups, static_cast<int>(experiment.model.layers.size()), kMaxPipelineDevices});
  std::vector<std::pair<int, std::vector<int>>> replicas_and_microbatches;  // (dp, its m choices)
  for (int dp : divisors(batch, std::min(groups, kMaxDataParallel)))
    replicas_and_microbatches.push_back({dp, divisors(batch / dp, kMaxMicrobatches)});
  int64_t count = 0;
  for (int pp = 1; pp <= most_stages; ++pp)
    for (const auto& [dp, microbatch_choices] : replicas_and_microbatches)
      if (dp * pp <= groups) count += static_cast<int64_t>(microbatch_choices.size());
  if (count > kMaxCandidates)
    throw ExperimentError(
        "DAPPLE's planner would try " + std::to_string(count) +
        " (pp, dp, micro-batch) choices; plan for fewer devices, use a batch size "
        "with fewer divisors, or use --planner pipedream");

  std::vector<Pending> pending;
  for (int pp = 1; pp <= most_stages; ++pp) {
    std::vector<int> stage_starts;
    for (const LayerRange& range :
         partition_layers(experiment.model, dapple_experiment(experiment, 1, pp, 1).parallel))
      if (range.begin > 0) stage_starts.push_back(range.begin);
    for (const auto& [dp, microbatch_choices] : replicas_and_microbatches) {
      if (dp * pp > groups) continue;
      for (int m : microbatch_choices) {
        Pending entry{dapple_experiment(experiment, dp, pp, m), 0, 0};
        entry.experiment.parallel.partition = PartitionRule::Explicit;
        entry.experiment.parallel.boundaries = stage_starts;
        if (!validate_experiment(entry.experiment).empty()) continue;
        bound(entry, link_bandwidth);
        pending.push_back(std::move(entry));
      }
    }
  }
  return pending;
}

// Where the pp - 1 stage boundaries are: the first layer of stages 1 .. pp - 1.
std::vector<int> boundaries_of(const std::vector<LayerRange>& split) {
  std::vector<int> starts;
  for (size_t s = 1; s < split.size(); ++s) starts.push_back(split[s].begin);
  return starts;
}

// The split search's order: what fits before what does not; then faster; the
// least memory while neither fits.
bool improves(const DappleCandidate& a, const DappleCandidate& b, int64_t memory) {
  const bool a_fits = a.peak_device_bytes <= memory, b_fits = b.peak_device_bytes <= memory;
  if (a_fits != b_fits) return a_fits;
  if (!a_fits) return a.peak_device_bytes < b.peak_device_bytes;
  return a.step_s < b.step_s;
}

}  // namespace

Experiment dapple_experiment(const Experiment& experiment, const DappleCandidate& candidate) {
  Experiment chosen =
      dapple_experiment(experiment, candidate.dp, candidate.pp, candidate.microbatches);
  if (candidate.pp > 1) {
    chosen.parallel.partition = PartitionRule::Explicit;
    chosen.parallel.boundaries = boundaries_of(candidate.split);
  }
  return chosen;
}

Experiment dapple_experiment(const Experiment& experiment, int dp, int pp, int microbatches) {
  Experiment candidate = experiment;
  ParallelPlan& plan = candidate.parallel;
  plan.dp = dp;
  plan.ep = std::gcd(plan.ep, dp);  // expert-parallel groups must fit the planned replicas
  plan.pp = pp;
  // ZeRO 2 and 3 do not go with a pipeline (lowering.h's check_zero): a
  // pipelined candidate keeps the optimizer state sharded (zero 1), as
  // Megatron-LM's distributed optimizer does.
  if (pp > 1) plan.zero = std::min(plan.zero, 1);
  plan.microbatches = microbatches;
  plan.schedule = ScheduleKind::OneFOneB;
  plan.update = UpdateMode::Sync;
  plan.chunks = 1;
  plan.partition = PartitionRule::Balanced;
  plan.boundaries.clear();
  return candidate;
}

DappleCandidate choose_stage_split(const Experiment& experiment, DappleCandidate best,
                                   int64_t memory, std::optional<double> link_bandwidth,
                                   DapplePlan& plan) {
  const int layers = static_cast<int>(experiment.model.layers.size());
  int budget = kMaxSplitMoves;
  for (bool moved = true; moved && budget > 0;) {
    moved = false;
    // Each move hands one layer from a stage to its neighbour: try first the
    // moves that relieve the fullest stage while nothing fits, the busiest
    // (compute and messages) once it does.
    const bool fits = best.peak_device_bytes <= memory;
    struct Move {
      size_t boundary;
      int step;
      double donor_load;
    };
    std::vector<Move> moves;
    const std::vector<int> boundaries = boundaries_of(best.split);
    for (size_t i = 0; i < boundaries.size(); ++i)
      for (const int step : {-1, 1}) {
        const size_t donor = step < 0 ? i : i + 1;  // the stage that gives up a layer
        moves.push_back(
            {i, step,
             fits ? best.stage_load_s[donor] : static_cast<double>(best.stage_peak_bytes[donor])});
      }
    std::stable_sort(moves.begin(), moves.end(),
                     [](const Move& a, const Move& b) { return a.donor_load > b.donor_load; });
    int without_gain = 0;
    for (const Move& move : moves) {
      if (budget == 0 || without_gain == kMovesWithoutGain) break;
      std::vector<int> trial = boundaries;
      trial[move.boundary] += move.step;
      const int previous = move.boundary == 0 ? 0 : trial[move.boundary - 1];
      const int next = move.boundary + 1 == trial.size() ? layers : trial[move.boundary + 1];
      if (trial[move.boundary] <= previous || trial[move.boundary] >= next)
        continue;  // every stage keeps a layer
      Experiment candidate = dapple_experiment(experiment, best);
      candidate.parallel.partition = PartitionRule::Explicit;
      candidate.parallel.boundaries = trial;
      if (!validate_experiment(candidate).empty()) continue;
      DappleCandidate simulated = simulate_candidate(candidate, link_bandwidth);
      ++plan.simulated;
      --budget;
      if (improves(simulated, best, memory)) {
        best = std::move(simulated);
        ++plan.split_moves;
        moved = true;
        break;
      }
      ++without_gain;
    }
  }
  return best;
}

DappleCandidate simulate_candidate(const Experiment& experiment,
                                   std::optional<double> link_bandwidth) {
  const ParallelPlan& plan = experiment.parallel;
  const std::vector<StageProfile> profiles =
      profile_stages(experiment.model, plan, microbatch_size(experiment),
                     experiment.training.precision, experiment.training.fp32_gradients);
  const Schedule schedule = build_schedule(plan, profiles);
  SimulationOptions metrics_only;
  metrics_only.record_events = metrics_only.record_memory = false;
  // As the prediction simulates it (gradient reduction overlapped or not), so
  // that the plan runs as predicted.
  const SimulationResult result =
      simulate(schedule, planning_cost_model(experiment, profiles, link_bandwidth),
               experiment_simulation_options(experiment, metrics_only));

  DappleCandidate candidate;
  candidate.dp = plan.dp;
  candidate.pp = plan.pp;
  candidate.microbatches = plan.microbatches;
  for (const StageProfile& profile : profiles) candidate.split.push_back(profile.layers);
  candidate.step_s = result.makespan / schedule.steps;
  candidate.stage_peak_bytes.assign(plan.stages(), 0);
  candidate.stage_load_s.assign(plan.stages(), 0.0);
  for (const DeviceSimStats& device : result.per_device) {
    const int rank = device_coord(plan, device.device).pipeline_rank;
    int64_t& stage_peak = candidate.stage_peak_bytes[rank];
    stage_peak = std::max(stage_peak, device.peak_total_bytes);
    candidate.stage_load_s[rank] =
        std::max(candidate.stage_load_s[rank], device.busy + device.comm);
    candidate.peak_device_bytes = std::max(candidate.peak_device_bytes, device.peak_total_bytes);
  }
  return candidate;
}

DapplePlan plan_dapple(const Experiment& experiment, int devices, int64_t memory_per_device,
                       std::optional<double> link_bandwidth) {
  std::vector<Pending> pending =
      candidates(experiment, devices / (experiment.parallel.tp * experiment.parallel.cp), link_bandwidth);
  DapplePlan plan;
  plan.candidates = static_cast<int>(pending.size());
  if (pending.empty())
    throw ExperimentError("no pp, dp and micro-batch count splits training.batch_size = " +
                          std::to_string(experiment.training.batch_size) + " over " +
                          std::to_string(devices) +
                          " devices into a valid experiment; change the batch size or the model");

  std::sort(pending.begin(), pending.end(),
            [](const Pending& a, const Pending& b) { return a.step_bound_s < b.step_bound_s; });
  for (const Pending& entry : pending) {
    if (plan.best && entry.step_bound_s > plan.best->step_s) break;
    if (entry.memory_bound > memory_per_device) continue;
    DappleCandidate candidate = simulate_candidate(entry.experiment, link_bandwidth);
    ++plan.simulated;
    if (candidate.peak_device_bytes > memory_per_device) continue;
    if (!plan.best || better(candidate, *plan.best)) plan.best = std::move(candidate);
  }
  if (plan.best) {
    plan.balanced_step_s = plan.best->step_s;
    plan.best = choose_stage_split(experiment, *plan.best, memory_per_device, link_bandwidth, plan);
    return plan;
  }

  // Nothing fits on a balanced split: the one that needs the least memory,
  // simulating in the order of the memory bound until the bound passes the
  // best peak found; then its split is chosen, which may make it fit.
  std::sort(pending.begin(), pending.end(),
            [](const Pending& a, const Pending& b) { return a.memory_bound < b.memory_bound; });
  std::optional<DappleCandidate> smallest;
  for (const Pending& entry : pending) {
    if (smallest && entry.memory_bound >= smallest->peak_device_bytes) break;
    DappleCandidate candidate = simulate_candidate(entry.experiment, link_bandwidth);
    ++plan.simulated;
    if (!smallest || candidate.peak_device_bytes < smallest->peak_device_bytes)
      smallest = std::move(candidate);
  }
  const DappleCandidate refined =
      choose_stage_split(experiment, *smallest, memory_per_device, link_bandwidth, plan);
  if (refined.peak_device_bytes <= memory_per_device)
    plan.best = refined;
  else
    plan.smallest_memory = refined.peak_device_bytes;
  return plan;
}

}  // namespace pipelab
