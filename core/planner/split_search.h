// The search over every split PipeLab models: for a model, a global batch
// and a cluster of `devices`, every tp (within a node), cp (sequence models),
// pp, dp = devices / (tp x cp x pp), ep (models with experts: dividing dp),
// ZeRO stage, synchronous pipeline schedule (1f1b, interleaved-1f1b with 2, 4
// or 8 chunks, zb-h1, zb-v, dualpipev), recompute policy (none, selective,
// full) and micro-batch count, with sequence parallelism wherever tp > 1 and
// the layers split into balanced stages; offloading (the optimizer's state,
// or activations) where a split does not fit without it.
//
// Three passes, each cheaper than the next:
//  1. validity: the candidate experiment must validate (divisibility, limits,
//     what a schedule needs); the first problem is its reason.
//  2. analytical bounds, from the candidate's stage profiles and cost model:
//     its step is at least, on some pipeline rank, the fill (micro-batch 0's
//     forward through every stage before the rank's first) plus its own
//     compute for all micro-batches (F, B and recompute; no communication),
//     plus, where the backward is not split, the last micro-batch's backward
//     through those earlier stages; a device holds at least its stages'
//     weights, optimizer state and collective buffers, one micro-batch's
//     (kept) activations of each, and the gradients of one of them. A
//     candidate whose memory bound does not fit is pruned.
//  3. simulation, of metrics only, of up to max_simulations candidates in
//     the order of an estimate (the busiest rank's compute and tensor-parallel
//     collectives, or its pipeline messages, over 1 - the schedule's textbook
//     bubble; one micro-batch's messages through the pipeline and back; the
//     exposed gradient reduction; offload copies; the update); a
//     plan fits when its simulated peak on every device is at most (1 -
//     margin) x the device's memory. A candidate whose bound is no faster
//     than the `top`-th plan found is certainly slower and is not simulated;
//     one left over when the simulations run out is pruned with its estimate,
//     so a larger --max-simulations can only find a faster plan, never lose one.
// Every candidate that is not among the plans returned is pruned with its
// reason and by how much.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/io/experiment.h"
#include "core/trace/trace_events.h"

namespace pipelab {

// Restricts the search to the values given for a dimension (empty: every value).
struct SearchSpace {
  std::vector<int> tp, cp, pp, dp, zero, microbatches;
  std::vector<ScheduleKind> schedules;  // interleaved-1f1b covers 2, 4 and 8 chunks; 1f1b also pp 1
  std::vector<std::string> recompute;   // "none", "selective", "full"
  std::vector<int> ep;                  // models with experts: divisors of dp
  // "none", "activations", "optimizer". Empty: none, and the other two where a
  // split's memory bound does not fit without them (offloading only adds copies).
  std::vector<std::string> offload;
};

// Parses one "dimension=value,value" restriction into `space`; throws
// ExperimentError naming the dimension or value that is not known.
void restrict_search_space(SearchSpace& space, const std::string& assignment);

// How far a search has come, for a progress line or a stop button.
struct SearchProgress {
  int64_t candidates = 0;   // looked at so far (validated and bounded)
  int simulated = 0;        // simulations run so far
  int max_simulations = 0;  // the budget
};

struct SearchRequest {
  int devices = 0;                // every plan uses all of them
  int64_t memory_per_device = 0;  // bytes
  double memory_margin = 0.1;     // kept free: a plan fits when its peak <= (1 - margin) x memory
  int top = 5;                    // plans to return, fastest first
  int devices_per_node = 8;       // tp stays inside a node
  int max_simulations = 24;       // simulated in the order of their estimates; the rest pruned
  SearchSpace space;
  // Called now and then on the search's thread; returning false stops the
  // search, which then throws ExperimentError saying it was stopped.
  std::function<bool(const SearchProgress&)> on_progress;
};

struct SearchedPlan {
  ParallelPlan plan;
  double step_bound_s = 0;         // pass 2
  double step_estimate_s = 0;      // pass 2: the busiest rank's compute and collectives over
                                   // (1 - the schedule's textbook bubble), then the update
  int64_t memory_bound = 0;        // pass 2, the fullest device
  int64_t memory_estimate = 0;     // pass 2: model states, gradients and the schedule's usual
                                   // micro-batches in flight, the fullest device
  bool simulated = false;          // the fields below are the simulator's
  double step_s = 0;               // simulated
  double mfu = 0;                  // simulated step, model FLOPs over the devices' peak
  double bubble = 0;               // simulated: idle share of devices x makespan
  int64_t peak_bytes = 0;          // simulated, the fullest device
  MemoryBytes peak_by_category{};  // that device's peak of each category
};

enum class PruneReason { Invalid, Memory, Slower, NotSimulated };
const char* prune_reason_name(
    PruneReason reason);  // "invalid", "memory", "slower", "not simulated"

// Which constraint set a candidate aside, with the numbers it states, so
// that the CLI's English (prune_why_text) and the app's translated text are
// written from the same facts.
enum class PruneDetail {
  Problem,          // invalid: `problem`, the validation's message
  MemoryBound,      // needs at least `bytes` per device, over `usable_bytes`
  MemoryPeak,       // the simulator's peak `bytes`, over `usable_bytes`
  SimulatedSlower,  // simulated at `step_s`, behind `faster_plans` faster ones
  BoundSlower,      // takes at least `step_s`, more than plan `reference_rank`'s `reference_step_s`
  Estimated,        // not simulated: estimated at `step_s` (at least `bound_s`), with
                    // `bytes` against `usable_bytes`, or against plan `reference_rank`'s
                    // simulated `reference_step_s` (reference_rank 0: none), within
                    // `max_simulations`
};

struct PrunedPlan {
  ParallelPlan plan;
  PruneReason reason = PruneReason::Invalid;
  PruneDetail detail = PruneDetail::Problem;
  std::string problem;
  int64_t bytes = 0, usable_bytes = 0;
  double step_s = 0, bound_s = 0, reference_step_s = 0;
  int reference_rank = 0, faster_plans = 0, max_simulations = 0;
  std::string why;  // prune_why_text of the above: the constraint and by how much
};

// The English sentence of a pruned plan's detail, e.g. "the simulator predicts
// a peak of 92.1 GB, 20.1 GB over the 72 GB usable".
std::string prune_why_text(const PrunedPlan& pruned);

struct SearchResult {
  std::vector<SearchedPlan> best;  // fastest first (less memory on ties), at most `top`
  std::vector<PrunedPlan> pruned;  // every other candidate
  // Every candidate that validated, with its bounds and estimates (and the
  // simulator's numbers where it ran): the points of the app's planner view.
  std::vector<SearchedPlan> considered;
  int64_t candidates = 0;  // best + pruned
  int simulated = 0;
  int64_t usable_bytes = 0;  // (1 - margin) x memory per device
};

// "tp 8 cp 1 pp 8 dp 1 zero 1 interleaved-1f1b x2 selective m 32"; ZeRO 3
// that keeps the gathered weights for the backward (reshard_after_forward
// false) says "zero 3 kept"
std::string split_label(const ParallelPlan& plan);

// `experiment` with `plan` as its split.
Experiment searched_experiment(const Experiment& experiment, const ParallelPlan& plan);

// Throws ExperimentError for what cannot be searched: fewer than 1 device, no
// memory, a margin outside [0, 1), the unit profile, an asynchronous
// experiment (the search covers synchronous training), top < 1.
SearchResult search_splits(const Experiment& experiment, const SearchRequest& request);

}  // namespace pipelab
