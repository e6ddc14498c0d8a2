// DAPPLE's planner (Fan et al., "DAPPLE: A Pipelined Data Parallel Approach for
// Training Large Models", PPoPP 2021): synchronous pipeline and data
// parallelism. It tries every pipeline depth pp, replica count dp (dp x pp
// device groups of tp devices, at most the devices given) and micro-batch
// count m (dividing the per-replica batch), splits the layers into pp stages
// balanced by predicted time (partition = balanced, the split DAPPLE's
// planner looks for), and simulates each on the 1F1B schedule (DAPPLE's
// early-backward schedule). The plan is the fastest predicted step whose
// simulated peak memory fits on every device (fewest devices, then fewest
// micro-batches, on ties).
//
// Then DAPPLE's planner chooses the stage split: from the best plan's
// balanced split (or, when nothing fits, the one that needs the least
// memory), it moves one stage boundary by one layer at a time, keeping each
// move the simulator finds better (fitting first, then faster; the least
// memory while nothing fits), until kMovesWithoutGain moves in a row do not
// help or kMaxSplitMoves simulations are spent. Moves that relieve the
// busiest stage (the fullest while nothing fits) are tried first. The balanced split balances
// compute alone; the moves also weigh what it ignores: the activations each boundary sends, the
// first stages' in-flight activations, the last stage's loss.
//
// A candidate's step cannot beat, for any stage s, m x the stage's F + B plus
// the F + B of every stage before it (micro-batch 0 must reach s, and the
// last gradient must get back from it) or plus its gradients' all-reduce and
// optimizer step, nor its memory its heaviest stage's
// weights, gradients and optimizer state; candidates are simulated in
// the order of that time bound, and the search stops once the bound passes
// the best step found, so large models need few simulations.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "core/io/experiment.h"
#include "core/plan/partition.h"

namespace pipelab {

struct DappleCandidate {
  int dp = 1;
  int pp = 1;
  int microbatches = 1;
  std::vector<LayerRange> split;          // its layers per stage
  double step_s = 0;                      // simulated step time
  int64_t peak_device_bytes = 0;          // simulated, the largest over devices
  std::vector<int64_t> stage_peak_bytes;  // simulated, per stage (largest over its devices)
  std::vector<double> stage_load_s;       // simulated compute and messages, per stage (largest)
};

struct DapplePlan {
  std::optional<DappleCandidate> best;  // empty when nothing fits the memory
  // When nothing fits: the smallest simulated peak any candidate needs.
  int64_t smallest_memory = 0;
  int candidates = 0;  // valid (pp, dp, m) tried
  int simulated = 0;   // of which simulated, and the splits tried
  // The best (pp, dp, m) on its balanced split, before the split was chosen
  // (0 when nothing fits that way), and how many boundary moves were kept.
  double balanced_step_s = 0;
  int split_moves = 0;
};

// Simulations the choice of the split may spend, and the moves it tries
// without a gain before it stops.
inline constexpr int kMaxSplitMoves = 48;
inline constexpr int kMovesWithoutGain = 4;

// The experiment a candidate describes: the given one with parallel.dp, pp,
// microbatches, schedule 1f1b, synchronous updates and the balanced split.
Experiment dapple_experiment(const Experiment& experiment, int dp, int pp, int microbatches);

// The experiment a candidate describes with its own split (explicit boundaries).
Experiment dapple_experiment(const Experiment& experiment, const DappleCandidate& candidate);

// Simulates `experiment` on its profile with the link replaced by
// `link_bandwidth` (bytes/s) when given: the candidate's step and peaks.
DappleCandidate simulate_candidate(const Experiment& experiment,
                                   std::optional<double> link_bandwidth);

// The stage split for `start`'s (dp, pp, m), from its split, as the header
// describes; `memory_per_device` bytes. Counts its simulations and the moves
// it keeps in `plan`.
DappleCandidate choose_stage_split(const Experiment& experiment, DappleCandidate start,
                                   int64_t memory_per_device, std::optional<double> link_bandwidth,
                                   DapplePlan& plan);

// `devices` in all (a multiple of parallel.tp), `memory_per_device` bytes.
// Throws ExperimentError for an experiment that cannot be planned.
DapplePlan plan_dapple(const Experiment& experiment, int devices, int64_t memory_per_device,
                       std::optional<double> link_bandwidth = std::nullopt);

}  // namespace pipelab
