#include "core/planner/split_search.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <numeric>
#include <optional>
#include <tuple>

#include "core/io/experiment_io.h"
#include "core/io/hardware_catalogue.h"
#include "core/plan/partition.h"
#include "core/plan/plan_limits.h"
#include "core/plan/stage_profile.h"
#include "core/planner/plan_proposal.h"
#include "core/planner/planning_costs.h"
#include "core/schedule/lowering.h"
#include "core/sim/bubble_formula.h"
#include "core/sim/experiment_prediction.h"
#include "core/sim/memory_model.h"
#include "core/sim/runtime_memory.h"
#include "core/sim/throughput.h"
#include "core/text/byte_size.h"
#include "core/text/quoted_excerpt.h"

namespace pipelab {
namespace {

// Full recomputation with the stage as its unit or each Transformer block
// (Megatron-LM's; the cpu executor trains both, the cuda one the stage).
enum class Recompute { None, Selective, Full, Block };

struct ScheduleChoice {
  ScheduleKind kind;
  int chunks;
};

// The synchronous pipeline schedules searched (GPipe holds more than 1F1B in
// the same time, so it never ranks).
const std::vector<ScheduleChoice>& pipeline_schedules() {
  static const std::vector<ScheduleChoice> choices = {
      {ScheduleKind::OneFOneB, 1},        {ScheduleKind::Interleaved1F1B, 2},
      {ScheduleKind::Interleaved1F1B, 4}, {ScheduleKind::Interleaved1F1B, 8},
      {ScheduleKind::ZeroBubbleH1, 1},    {ScheduleKind::ZeroBubbleV, 2},
      {ScheduleKind::DualPipeV, 2}};
  return choices;
}

std::vector<int> divisors_up_to(int64_t n, int64_t most) {
  std::vector<int> found;
  for (int64_t d = 1; d <= std::min(n, most); ++d)
    if (n % d == 0) found.push_back(static_cast<int>(d));
  return found;
}

bool has_blocks(const ModelSpec& model) {
  return std::any_of(model.layers.begin(), model.layers.end(), [](const LayerSpec& layer) {
    return layer.type == LayerType::TransformerBlock;
  });
}

// "12.0% more than", "3.5% less than"
std::string relative_text(double value, double reference) {
  const double change = value / reference - 1;
  return percent_text(std::abs(change)) + (change >= 0 ? " more than" : " less than");
}

// A pruned plan for `reason` and `detail`, the rest of it to be filled in.
PrunedPlan pruned_for(const ParallelPlan& plan, PruneReason reason, PruneDetail detail) {
  PrunedPlan pruned;
  pruned.plan = plan;
  pruned.reason = reason;
  pruned.detail = detail;
  return pruned;
}

// A pruned plan with its English sentence filled in.
PrunedPlan explained(PrunedPlan pruned) {
  pruned.why = prune_why_text(pruned);
  return pruned;
}

PrunedPlan invalid_plan(const ParallelPlan& plan, const std::string& problem) {
  PrunedPlan pruned = pruned_for(plan, PruneReason::Invalid, PruneDetail::Problem);
  pruned.problem = problem;
  return explained(pruned);
}

PrunedPlan simulated_slower(const SearchedPlan& entry, int top) {
  PrunedPlan pruned = pruned_for(entry.plan, PruneReason::Slower, PruneDetail::SimulatedSlower);
  pruned.step_s = entry.step_s;
  pruned.faster_plans = top;
  return explained(pruned);
}

bool splits_backward(ScheduleKind kind) {
  return kind == ScheduleKind::ZeroBubbleH1 || kind == ScheduleKind::ZeroBubbleV ||
         kind == ScheduleKind::DualPipeV;
}

// The textbook bubble of the candidate's schedule with stage 0's costs; 1F1B's
// where the formula does not hold (too few micro-batches for a V).
double estimated_bubble(const ParallelPlan& plan, const UnitCosts& stage0) {
  if (plan.pp == 1) return 0;
  double bubble =
      theoretical_bubble(plan.schedule, plan.pp, plan.microbatches, plan.chunks, stage0);
  if (!std::isfinite(bubble) || bubble < 0 || bubble >= 1)
    bubble = theoretical_bubble(ScheduleKind::OneFOneB, plan.pp, plan.microbatches, 1, stage0);
  return bubble;
}

// How many micro-batches' activations of one stage a pipeline rank holds at
// its peak, roughly: 1F1B's warm-up of pp - rank, Megatron's interleaved
// warm-up of 2 (pp - rank - 1) + (chunks - 1) pp + 1 chunk passes, and about
// pp of the V schedules' pairs of chunks.
double in_flight(const ParallelPlan& plan, int rank) {
  const int p = plan.pp, m = plan.microbatches, v = plan.chunks;
  switch (plan.schedule) {
    case ScheduleKind::Interleaved1F1B:
      return std::min(m * v, 2 * (p - rank - 1) + (v - 1) * p + 1);
    case ScheduleKind::ZeroBubbleV:
    case ScheduleKind::DualPipeV:
      return 2.0 * std::min(m, p + 1);
    default:
      return std::min(m, p - rank);
  }
}

// What pass 2 reads of a candidate's stages: the same for every ZeRO stage
// and schedule of one placement, so it is computed once for them.
struct StageCosts {
  std::vector<double> forward, backward, backward_input, work, collectives;
  // Per micro-batch, the messages across the boundary after stage s (its
  // activation forward, the gradient back); 0 after the last stage.
  std::vector<double> boundary_messages;
  // Per step, the data-parallel reduction of the stage's gradients.
  std::vector<double> gradient_sync;
  // Offloading: per step, the stage's gradients to the host, its optimizer
  // step there and its weights back; per micro-batch, its activations out and in.
  std::vector<double> host_optimizer, activation_copies;
  UnitCosts stage0;  // stage 0's f, b (input gradient) and w, for the bubble formulas
  double update = 0;
  CostModel cost;  // for stage_memory
  bool overlap_gradient_sync = true;  // simulation.overlap_grad_reduce
};

StageCosts stage_costs(const Experiment& candidate, const std::vector<StageProfile>& profiles,
                       const DeviceProfile& device, int slots) {
  const ParallelPlan& plan = candidate.parallel;
  StageCosts c;
  c.cost = CostModel::from_profiles(profiles, device, slots);
  c.overlap_gradient_sync = candidate.simulation.overlap_grad_reduce;
  const CostModel& cost = c.cost;
  for (int s = 0; s < plan.stages(); ++s) {
    const StageProfile& profile = cost.stages()[s];
    c.boundary_messages.push_back(
        s + 1 < plan.stages()
            ? cost.duration(stage_op(OpKind::SendActivation, s, profile.output_bytes)) +
                  cost.duration(stage_op(OpKind::SendGradient, s + 1, profile.output_bytes))
            : 0.0);
    c.gradient_sync.push_back(cost.collective_duration(
        stage_op(OpKind::AllReduce, s, profile.gradient_bytes()), plan.data_parallel_size()));
    const DeviceProfile& device_profile = cost.device();
    const double host_link =
        device_profile.host_link_bandwidth > 0 ? device_profile.host_link_bandwidth : 0;
    const double host_memory = device_profile.host_memory_bandwidth;
    c.host_optimizer.push_back(
        host_link > 0 && host_memory > 0
            ? static_cast<double>(profile.gradient_bytes() + profile.weight_bytes()) / host_link +
                  static_cast<double>(profile.params) *
                      CostModel::optimizer_bytes_per_param(slots) / host_memory
            : 0.0);
    c.activation_copies.push_back(
        host_link > 0 ? 2.0 * static_cast<double>(profile.activation_bytes) / host_link : 0.0);
    c.forward.push_back(cost.duration(stage_op(OpKind::Forward, s)));
    const double fused = cost.duration(stage_op(OpKind::Backward, s));
    const double input = cost.duration(stage_op(OpKind::BackwardInput, s));
    const double split = input + cost.duration(stage_op(OpKind::BackwardWeight, s));
    c.backward.push_back(std::min(fused, split));
    c.backward_input.push_back(std::min(fused, input));
    c.work.push_back(c.forward[s] + c.backward[s] +
                     (plan.recompute ? cost.duration(stage_op(OpKind::Recompute, s)) : 0.0));
    double collectives = 0;
    for (const TensorParallelAllReduce& collective : cost.stages()[s].tp_allreduces)
      collectives += cost.collective_duration(
          stage_op(tensor_parallel_op_kind(collective.collective), s, collective.bytes), plan.tp);
    c.collectives.push_back(collectives);
  }
  c.stage0.f = c.forward[0];
  c.stage0.b = cost.duration(stage_op(OpKind::BackwardInput, 0));
  c.stage0.w = cost.duration(stage_op(OpKind::BackwardWeight, 0));
  c.update = cost.duration(stage_op(OpKind::Update, 0));
  return c;
}

// Pass 2 (see the header). The cost model times one op as the simulator does;
// inside a node, as tp is, a collective costs what the device's link gives.
void bound(const ParallelPlan& plan, const StageCosts& c, SearchedPlan& entry) {
  const DeviceLayout layout = plan.layout();
  const int stages = plan.stages();
  double slowest_rank = 0, exposed_sync = 0, slowest_offload = 0;
  const int64_t runtime = c.cost.is_unit() ? 0 : runtime_memory_bytes(plan, c.cost.device());
  for (int rank = 0; rank < plan.pp; ++rank) {
    int first = stages;
    double busy = 0, rank_with_collectives = 0, rank_messages = 0, rank_sync = 0, rank_backward = 0,
           rank_offload = 0;
    int64_t states = 0, activations = 0, gradients = 0,
            fewest_gradients = std::numeric_limits<int64_t>::max();
    for (int chunk = 0; chunk < plan.chunks; ++chunk) {
      const int s = layout.stage_of(rank, chunk);
      first = std::min(first, s);
      busy += plan.microbatches * c.work[s];
      rank_with_collectives += plan.microbatches * (c.work[s] + c.collectives[s]);
      rank_messages +=
          plan.microbatches * (c.boundary_messages[s] + (s > 0 ? c.boundary_messages[s - 1] : 0.0));
      rank_sync += c.gradient_sync[s];
      rank_backward += c.backward[s];
      const StageMemory memory =
          stage_memory(c.cost, s, plan.zero, plan.data_parallel_size(), plan.ep);
      // Offloaded optimizer state lives in host memory; its copies cost time.
      const bool host_optimizer = plan.offload == OffloadMode::Optimizer;
      states += memory.weights + (host_optimizer ? 0 : memory.optimizer_state) +
                memory.collective_buffers;
      if (host_optimizer) rank_offload += c.host_optimizer[s];
      if (plan.offload == OffloadMode::Activations)
        rank_messages += plan.microbatches * c.activation_copies[s];
      activations += plan.recompute ? memory.kept_input : memory.activations;
      fewest_gradients = std::min(fewest_gradients, memory.gradients);
      gradients += memory.gradients;
    }
    // Its communication lane carries its pipeline messages beside the compute;
    // the gradients' reduction hides under the last backward where it overlaps.
    slowest_rank = std::max(slowest_rank, std::max(rank_with_collectives, rank_messages));
    exposed_sync =
        std::max(exposed_sync,
                 c.overlap_gradient_sync ? std::max(0.0, rank_sync - rank_backward) : rank_sync);
    slowest_offload = std::max(slowest_offload, rank_offload);
    double fill = 0, drain = 0;
    for (int s = 0; s < first; ++s) {
      fill += c.forward[s];
      drain += c.backward_input[s];
    }
    if (splits_backward(plan.schedule))
      drain = 0;  // a deferred weight gradient may end the rank's work
    entry.step_bound_s = std::max(entry.step_bound_s, fill + busy + drain);
    entry.memory_bound =
        std::max(entry.memory_bound, runtime + states + activations + fewest_gradients);
    // Offloaded activations: the running micro-batch's and the next one's stay.
    const double held = plan.offload == OffloadMode::Activations
                            ? std::min(2.0, in_flight(plan, rank))
                            : in_flight(plan, rank);
    entry.memory_estimate =
        std::max(entry.memory_estimate, runtime + states + gradients +
                                            static_cast<int64_t>(held * activations / plan.chunks));
  }
  // The estimate: the busiest rank's compute and tensor-parallel collectives
  // (or its messages, when they take longer), stretched by the schedule's
  // textbook bubble; the messages of one micro-batch's way through the
  // pipeline and back; the exposed gradient reduction; the optimizer step.
  double pipeline_messages = 0;
  for (double messages : c.boundary_messages) pipeline_messages += messages;
  entry.step_estimate_s = std::max(
      entry.step_bound_s, slowest_rank / (1 - estimated_bubble(plan, c.stage0)) +
                              pipeline_messages + exposed_sync + slowest_offload + c.update);
}

// Faster first; less memory on ties.
bool faster(const SearchedPlan& a, const SearchedPlan& b) {
  if (a.step_s != b.step_s) return a.step_s < b.step_s;
  return a.peak_bytes < b.peak_bytes;
}

void simulate(const Experiment& candidate, SearchedPlan& entry) {
  SimulationOptions metrics_only;
  metrics_only.record_events = metrics_only.record_memory = false;
  metrics_only.first_replica_only = true;  // replicas run alike: one stands for all
  const Prediction prediction = predict_experiment(candidate, std::nullopt, 0, metrics_only);
  const Throughput throughput = predicted_throughput(candidate, prediction);
  entry.simulated = true;
  entry.step_s = throughput.step_seconds;
  entry.mfu = throughput.mfu;
  entry.bubble = prediction.result.bubble_fraction;
  for (const DeviceSimStats& device : prediction.result.per_device)
    if (device.peak_total_bytes > entry.peak_bytes) {
      entry.peak_bytes = device.peak_total_bytes;
      entry.peak_by_category = device.peak_bytes;
    }
}

void check_request(const Experiment& experiment, const SearchRequest& request) {
  if (request.devices < 1)
    throw ExperimentError("the search needs at least 1 device, got " +
                          std::to_string(request.devices));
  if (request.memory_per_device < 1)
    throw ExperimentError("memory per device must be above 0 bytes, e.g. 80GB");
  if (!(request.memory_margin >= 0 && request.memory_margin < 1))
    throw ExperimentError(
        "the memory margin is a share of each device's memory kept free, at "
        "least 0 and below 1 (e.g. 0.1)");
  if (request.top < 1) throw ExperimentError("the search must return at least 1 plan");
  if (request.devices_per_node < 1) throw ExperimentError("a node must hold at least 1 device");
  if (experiment.simulation.profile == "unit")
    throw ExperimentError(
        "simulation.profile = unit counts no bytes or seconds, so there is nothing to search "
        "with; set simulation.profile to a device such as h100");
  if (experiment.parallel.update == UpdateMode::Async ||
      is_asynchronous(experiment.parallel.schedule))
    throw ExperimentError(
        "the search covers synchronous training; set parallel.update = sync and "
        "a synchronous schedule (e.g. 1f1b) first");
}

// The balanced split of a candidate, as explicit stage starts: the same for
// every dp, micro-batch count and ZeRO stage, so it is found once for them.
class BalancedSplits {
 public:
  explicit BalancedSplits(const ModelSpec& model) : model_(model) {}

  // Sets plan.partition to the explicit starts of its balanced stages; false
  // when the layers cannot be split so (the candidate is then validated as
  // balanced, for the reason).
  bool apply(ParallelPlan& plan) {
    const auto key =
        std::make_tuple(plan.tp, plan.cp, plan.pp, plan.chunks, static_cast<int>(plan.schedule),
                        plan.recompute, plan.selective_recompute, plan.sequence_parallel);
    auto found = starts_.find(key);
    if (found == starts_.end()) {
      std::optional<std::vector<int>> starts;
      try {
        ParallelPlan balanced = plan;
        balanced.partition = PartitionRule::Balanced;
        std::vector<int> boundaries;
        for (const LayerRange& range : partition_layers(model_, balanced))
          if (range.begin > 0) boundaries.push_back(range.begin);
        starts = boundaries;
      } catch (const std::exception&) {
      }
      found = starts_.emplace(key, starts).first;
    }
    if (!found->second) return false;
    plan.partition = PartitionRule::Explicit;
    plan.boundaries = *found->second;
    return true;
  }

 private:
  const ModelSpec& model_;
  std::map<std::tuple<int, int, int, int, int, bool, bool, bool>, std::optional<std::vector<int>>>
      starts_;
};

template <typename T>
bool allowed(const std::vector<T>& values, const T& value) {
  return values.empty() || std::find(values.begin(), values.end(), value) != values.end();
}

const char* recompute_name(Recompute recompute) {
  return recompute == Recompute::Full        ? "full"
         : recompute == Recompute::Block     ? "block"
         : recompute == Recompute::Selective ? "selective"
                                             : "none";
}

}  // namespace

void restrict_search_space(SearchSpace& space, const std::string& assignment) {
  const auto eq = assignment.find('=');
  const std::string dimension = assignment.substr(0, eq);
  // The place, then why (ui_core_message_sites_test reads each call's why as a site).
  const auto search_space_error = [&](const std::string& why) {
    throw ExperimentError("search space " + quoted_excerpt(assignment) + ": " + why);
  };
  if (eq == std::string::npos || eq + 1 == assignment.size())
    search_space_error("write dimension=value,value, e.g. cp=1 or schedule=1f1b,zb-v");
  std::vector<std::string> values;
  std::string rest = assignment.substr(eq + 1);
  for (size_t start = 0;;) {
    const size_t comma = rest.find(',', start);
    values.push_back(
        rest.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  std::vector<int>* numbers = dimension == "tp"             ? &space.tp
                              : dimension == "ep"           ? &space.ep
                              : dimension == "cp"           ? &space.cp
                              : dimension == "pp"           ? &space.pp
                              : dimension == "dp"           ? &space.dp
                              : dimension == "zero"         ? &space.zero
                              : dimension == "microbatches" ? &space.microbatches
                                                            : nullptr;
  for (const std::string& value : values) {
    if (numbers) {
      int number = 0;
      size_t used = 0;
      try {
        number = std::stoi(value, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      if (used == 0 || used != value.size() || number < (dimension == "zero" ? 0 : 1))
        search_space_error(quoted_excerpt(value) + " is not a whole number" +
                           (dimension == "zero" ? " from 0 to 3" : " of at least 1"));
      numbers->push_back(number);
    } else if (dimension == "schedule") {
      const std::optional<ScheduleKind> kind = parse_schedule(value);
      if (!kind || is_asynchronous(*kind))
        search_space_error(
            quoted_excerpt(value) +
            " is not a schedule the search tries; valid: 1f1b, interleaved-1f1b, zb-h1, zb-v, "
            "dualpipev");
      space.schedules.push_back(*kind);
    } else if (dimension == "offload") {
      if (!parse_offload(value))
        search_space_error(quoted_excerpt(value) +
                           " is not an offload; valid: none, activations, optimizer");
      space.offload.push_back(value);
    } else if (dimension == "recompute") {
      if (value != "none" && value != "selective" && value != "full" && value != "block")
        search_space_error(quoted_excerpt(value) +
                           " is not a recompute policy; valid: none, selective, full, block");
      space.recompute.push_back(value);
    } else {
      search_space_error(
          "no dimension " + quoted_excerpt(dimension) +
          "; valid: tp, cp, pp, dp, ep, zero, schedule, recompute, offload, microbatches");
    }
  }
}

const char* prune_reason_name(PruneReason reason) {
  switch (reason) {
    case PruneReason::Invalid:
      return "invalid";
    case PruneReason::Memory:
      return "memory";
    case PruneReason::Slower:
      return "slower";
    case PruneReason::NotSimulated:
      return "not simulated";
  }
  return "?";
}

std::string split_label(const ParallelPlan& plan) {
  std::string label = "tp " + std::to_string(plan.tp) + " cp " + std::to_string(plan.cp) + " pp " +
                      std::to_string(plan.pp) + " dp " + std::to_string(plan.dp) + " zero " +
                      std::to_string(plan.zero);
  if (plan.zero == 3 && !plan.reshard_after_forward)
    label += " kept";  // the gathered weights, for the backward
  if (plan.pp > 1) label += std::string(" ") + schedule_name(plan.schedule);
  if (plan.schedule == ScheduleKind::Interleaved1F1B) label += " x" + std::to_string(plan.chunks);
  label += plan.recompute_blocks      ? " block"
           : plan.recompute           ? " full"
           : plan.selective_recompute ? " selective"
                                      : " no-recompute";
  if (plan.ep > 1) label += " ep " + std::to_string(plan.ep);
  if (plan.offload != OffloadMode::None)
    label += std::string(" offload ") + offload_name(plan.offload);
  return label + " m " + std::to_string(plan.microbatches);
}

Experiment searched_experiment(const Experiment& experiment, const ParallelPlan& plan) {
  Experiment candidate = experiment;
  candidate.parallel = plan;
  return candidate;
}

SearchResult search_splits(const Experiment& experiment, const SearchRequest& request) {
  check_request(experiment, request);
  SearchProgress progress;
  progress.max_simulations = request.max_simulations;
  const auto report = [&] {
    if (request.on_progress && !request.on_progress(progress))
      throw ExperimentError("the search was stopped before it finished");
  };
  // Candidates differ only in their split: what else is wrong is wrong for all of them.
  const std::vector<std::string> problems = validate_experiment(experiment);
  const std::vector<std::string> split_problems = validate_parallel(experiment);
  for (const std::string& problem : problems)
    if (std::find(split_problems.begin(), split_problems.end(), problem) == split_problems.end())
      throw ExperimentError("fix the experiment first: " + problem);
  Experiment all_devices = experiment;  // the cluster must hold every device searched
  all_devices.parallel = ParallelPlan{};
  all_devices.parallel.dp = request.devices;
  experiment_cluster(all_devices);
  SearchResult result;
  result.usable_bytes =
      static_cast<int64_t>(std::floor((1 - request.memory_margin) * request.memory_per_device));
  const ModelSpec& model = experiment.model;
  const bool sequence = is_sequence_model(model);
  const bool blocks = has_blocks(model);
  const int64_t batch = experiment.training.batch_size;

  std::vector<Recompute> recomputes = {Recompute::None, Recompute::Full};
  if (blocks) {
    recomputes.insert(recomputes.begin() + 1, Recompute::Selective);
    recomputes.push_back(Recompute::Block);
  }
  std::vector<int> context_sizes = {1};
  if (sequence && blocks)
    for (int cp = 2; cp <= kMaxContextParallel; cp *= 2) context_sizes.push_back(cp);

  std::vector<SearchedPlan> valid;
  BalancedSplits splits(model);
  Experiment candidate = experiment;  // each candidate's split goes into this one copy
  // The device as the cost model sees it (bf16 peaks under mixed precision), and the optimizer's
  // slots.
  const DeviceProfile device = experiment_device(experiment);
  const int slots = optimizer_slots(experiment);
  // A split's stage costs, or why it cannot be profiled (validate_parallel's
  // last check), found once for every candidate that shares its stages.
  struct ProfiledSplit {
    std::optional<StageCosts> costs;
    std::string problem;
  };
  std::map<std::tuple<int, int, int, int, int, bool, bool, bool, int64_t>, ProfiledSplit>
      profiled_splits;
  const SearchSpace& space = request.space;
  const bool experts = model_has_experts(model);
  // Validates and bounds one candidate; keeps it when its memory bound fits.
  enum class Considered { Invalid, OverMemory, Kept };
  const auto consider = [&](const ParallelPlan& plan) {
    ++result.candidates;
    if (result.candidates % 1024 == 0) {
      progress.candidates = result.candidates;
      report();
    }
    candidate.parallel = plan;
    const std::vector<std::string> problems = validate_parallel_fields(candidate);
    if (!problems.empty()) {
      result.pruned.push_back(invalid_plan(plan, problems.front()));
      return Considered::Invalid;
    }
    const auto key = std::make_tuple(plan.tp, plan.cp, plan.pp, plan.ep, plan.chunks,
                                     uses_v_placement(plan.schedule), plan.recompute,
                                     plan.selective_recompute, microbatch_size(candidate));
    auto profiled = profiled_splits.find(key);
    if (profiled == profiled_splits.end()) {
      ProfiledSplit split;
      std::vector<StageProfile> profiles;
      try {  // as validate_parallel's last check
        profiles = profile_stages(candidate.model, plan, microbatch_size(candidate),
                                  candidate.training.precision, candidate.training.fp32_gradients);
      } catch (const std::invalid_argument& error) {
        split.problem = error.what();
      }
      if (split.problem.empty()) split.costs = stage_costs(candidate, profiles, device, slots);
      profiled = profiled_splits.emplace(key, std::move(split)).first;
    }
    if (!profiled->second.costs) {
      result.pruned.push_back(invalid_plan(plan, profiled->second.problem));
      return Considered::Invalid;
    }
    SearchedPlan entry;
    entry.plan = plan;
    bound(plan, *profiled->second.costs, entry);
    if (entry.memory_bound > result.usable_bytes) {
      result.considered.push_back(entry);
      PrunedPlan pruned = pruned_for(plan, PruneReason::Memory, PruneDetail::MemoryBound);
      pruned.bytes = entry.memory_bound;
      pruned.usable_bytes = result.usable_bytes;
      result.pruned.push_back(explained(pruned));
      return Considered::OverMemory;
    }
    valid.push_back(std::move(entry));
    return Considered::Kept;
  };
  for (int tp :
       divisors_up_to(request.devices, std::min(request.devices_per_node, kMaxTensorParallel)))
    for (int cp : context_sizes) {
      if (request.devices % (tp * cp) != 0 || !allowed(space.tp, tp) || !allowed(space.cp, cp))
        continue;
      const int groups = request.devices / (tp * cp);
      for (int pp :
           divisors_up_to(groups, std::min<int64_t>(model.layers.size(), kMaxPipelineDevices))) {
        const int dp = groups / pp;
        if (!allowed(space.pp, pp) || !allowed(space.dp, dp)) continue;
        std::vector<ScheduleChoice> schedules = {{ScheduleKind::OneFOneB, 1}};
        if (pp > 1) schedules = pipeline_schedules();
        const std::vector<int> microbatch_counts =
            batch % dp == 0 ? divisors_up_to(batch / dp, kMaxMicrobatches) : std::vector<int>{1};
        for (int ep : experts ? divisors_up_to(dp, dp) : std::vector<int>{1})
          for (int zero = 0; zero <= 3; ++zero)
            for (const ScheduleChoice& schedule : schedules)
              for (Recompute recompute : recomputes)
                for (int m : microbatch_counts) {
                  if (!allowed(space.ep, ep) || !allowed(space.zero, zero) ||
                      !allowed(space.schedules, schedule.kind) ||
                      !allowed(space.recompute, std::string(recompute_name(recompute))) ||
                      !allowed(space.microbatches, m))
                    continue;
                  // Under context parallelism the attention recomputes its scores
                  // anyway (recomputes_attention): selective is the same plan as
                  // none, listed once (as none, where the space allows it).
                  if (recompute == Recompute::Selective && cp > 1 &&
                      allowed(space.recompute, std::string(recompute_name(Recompute::None))))
                    continue;
                  ParallelPlan plan;
                  plan.dp = dp;
                  plan.tp = tp;
                  plan.cp = cp;
                  plan.pp = pp;
                  plan.ep = ep;
                  plan.zero = zero;
                  plan.schedule = schedule.kind;
                  plan.chunks = schedule.chunks;
                  plan.recompute = recompute == Recompute::Full || recompute == Recompute::Block;
                  plan.recompute_blocks = recompute == Recompute::Block;
                  plan.recompute_layers = 1;  // one block rebuilt at a time
                  plan.selective_recompute = recompute == Recompute::Selective;
                  plan.sequence_parallel = sequence && blocks && tp > 1;
                  plan.microbatches = m;
                  splits.apply(plan);
                  // ZeRO 3 both frees the gathered weights after the forward (FSDP's
                  // default) and keeps them for the backward (less traffic, more memory).
                  for (bool reshard :
                       zero == 3 ? std::vector<bool>{true, false} : std::vector<bool>{true}) {
                    plan.reshard_after_forward = reshard;
                    plan.offload = OffloadMode::None;
                    // Offloading only ever adds copies: it is tried where a split does not
                    // fit without it.
                    if (space.offload.empty()) {
                      if (consider(plan) != Considered::OverMemory) continue;
                      for (OffloadMode offload :
                           {OffloadMode::Optimizer, OffloadMode::Activations}) {
                        plan.offload = offload;
                        consider(plan);
                      }
                    } else {
                      for (const std::string& name : space.offload) {
                        plan.offload = *parse_offload(name);
                        consider(plan);
                      }
                    }
                  }
                }
      }
    }
  if (valid.empty()) return result;

  // Simulate first what is estimated to fit, fastest estimate first.
  const int64_t usable = result.usable_bytes;
  std::sort(valid.begin(), valid.end(), [usable](const SearchedPlan& a, const SearchedPlan& b) {
    const bool a_fits = a.memory_estimate <= usable, b_fits = b.memory_estimate <= usable;
    if (a_fits != b_fits) return a_fits;
    return a.step_estimate_s < b.step_estimate_s;
  });
  const int top = request.top;
  const auto full = [&] { return static_cast<int>(result.best.size()) == top; };
  std::vector<SearchedPlan> unsimulated;
  for (SearchedPlan& entry : valid) {
    if (full() && entry.step_bound_s >= result.best.back().step_s) {
      unsimulated.push_back(entry);  // pruned below, as certainly slower
      continue;
    }
    if (result.simulated >= request.max_simulations) {
      unsimulated.push_back(entry);
      continue;
    }
    progress.candidates = result.candidates;
    progress.simulated = result.simulated;
    report();
    simulate(searched_experiment(experiment, entry.plan), entry);
    ++result.simulated;
    if (entry.peak_bytes > result.usable_bytes) {
      PrunedPlan pruned = pruned_for(entry.plan, PruneReason::Memory, PruneDetail::MemoryPeak);
      pruned.bytes = entry.peak_bytes;
      pruned.usable_bytes = result.usable_bytes;
      result.pruned.push_back(explained(pruned));
      continue;
    }
    if (full()) {
      if (!faster(entry, result.best.back())) {
        result.pruned.push_back(simulated_slower(entry, top));
        continue;
      }
      result.pruned.push_back(simulated_slower(result.best.back(), top));
      result.best.pop_back();
    }
    result.best.insert(std::upper_bound(result.best.begin(), result.best.end(), entry, faster),
                       entry);
  }
  // What was not simulated: certainly slower when its bound is no faster than
  // the last plan ranked; otherwise judged by its estimate only.
  for (const SearchedPlan& entry : unsimulated) {
    if (full() && entry.step_bound_s >= result.best.back().step_s) {
      PrunedPlan pruned = pruned_for(entry.plan, PruneReason::Slower, PruneDetail::BoundSlower);
      pruned.step_s = entry.step_bound_s;
      pruned.reference_rank = top;
      pruned.reference_step_s = result.best.back().step_s;
      result.pruned.push_back(explained(pruned));
      continue;
    }
    PrunedPlan pruned = pruned_for(entry.plan, PruneReason::NotSimulated, PruneDetail::Estimated);
    pruned.step_s = entry.step_estimate_s;
    pruned.bound_s = entry.step_bound_s;
    pruned.bytes = entry.memory_estimate;
    pruned.usable_bytes = usable;
    if (!result.best.empty()) {
      pruned.reference_rank = static_cast<int>(result.best.size());
      pruned.reference_step_s = result.best.back().step_s;
    }
    pruned.max_simulations = request.max_simulations;
    result.pruned.push_back(explained(pruned));
  }
  result.considered.insert(result.considered.end(), valid.begin(), valid.end());
  return result;
}

std::string prune_why_text(const PrunedPlan& pruned) {
  const auto over = [&] {
    return byte_size_text(pruned.bytes - pruned.usable_bytes) + " over the " +
           byte_size_text(pruned.usable_bytes) + " usable";
  };
  switch (pruned.detail) {
    case PruneDetail::Problem:
      return pruned.problem;
    case PruneDetail::MemoryBound:
      return "needs at least " + byte_size_text(pruned.bytes) +
             " per device (model states and one micro-batch's activations), " + over();
    case PruneDetail::MemoryPeak:
      return "the simulator predicts a peak of " + byte_size_text(pruned.bytes) + ", " + over();
    case PruneDetail::SimulatedSlower:
      return "simulated at " + step_time_text(pruned.step_s) + ", behind " +
             std::to_string(pruned.faster_plans) + " faster plans";
    case PruneDetail::BoundSlower:
      return "its step takes at least " + step_time_text(pruned.step_s) + ", " +
             percent_text(pruned.step_s / pruned.reference_step_s - 1) + " more than plan " +
             std::to_string(pruned.reference_rank) + "'s " +
             step_time_text(pruned.reference_step_s);
    case PruneDetail::Estimated: {
      std::string why = "estimated at " + step_time_text(pruned.step_s) + " (at least " +
                        step_time_text(pruned.bound_s) + ")";
      if (pruned.bytes > pruned.usable_bytes)
        why += " and " + byte_size_text(pruned.bytes) + ", " +
               byte_size_text(pruned.bytes - pruned.usable_bytes) + " over the usable memory";
      else if (pruned.reference_rank > 0)
        why += ", " + relative_text(pruned.step_s, pruned.reference_step_s) + " plan " +
               std::to_string(pruned.reference_rank) + "'s simulated " +
               step_time_text(pruned.reference_step_s);
      return why + "; the search simulates " + std::to_string(pruned.max_simulations) +
             " candidates in the order of their estimates (--max-simulations)";
    }
  }
  return pruned.problem;
}

}  // namespace pipelab
