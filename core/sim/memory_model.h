// Memory model: what each device holds over a simulated run, by category.
//
//  weights          params x weight bytes (precision.h) per stage the device
//                   holds, from the start. Under ZeRO (parallel.zero) the
//                   weights, gradients and optimizer state are the device's
//                   share (zero_sharding.h)
//  optimizer state  params x (master copy + slots x slot bytes), from the start
//  gradients        params x gradient bytes per stage, allocated when the stage's first
//                   weight gradient of a step starts (B or BW) and freed when
//                   that stage's optimizer step (U) ends, or, for async data
//                   parallelism, when its PushGradient has reached the server
//  activations      activation_bytes per micro-batch, allocated when its F
//                   starts and freed when its B ends (BW for a split backward;
//                   what BI frees early is netted in split_backward_kept: the
//                   weight gradient still needs most of it). With
//                   recomputation (the device's program has Recompute ops,
//                   one before each micro-batch's backward) F keeps only the
//                   stage input (and each later transformer block's input)
//                   once it ends, and Recompute puts back what the backward
//                   needs at once (all the rest for an MLP; one block at a
//                   time for blocks) until B/BW.
//                   Offloading: an Offload's micro-batch's activations
//                   leave the device when the copy ends, a Reload's come
//                   back when it starts; both copies exist while one runs.
//                   While a B or BI runs it also holds its gradient buffers
//                   at their peak (StageProfile::backward_peak_bytes,
//                   split_backward_peak_bytes); from BI's end to BW's, what
//                   BW reads (split_backward_kept_bytes). The last stage
//                   holds each micro-batch's loss gradient from its F's end
//                   to its B's (or BI's) start (loss_gradient_bytes).
//  host             what offloading keeps in host memory: from an Offload's
//                   start to its Reload's end (not in the device's total);
//                   optimizer offloading: the optimizer state from the
//                   start, and the step's gradients from the Offload's start
//                   to the host U's end (the device's gradients go at the
//                   Offload's end)
//  stashed weights  (versions alive - 1) * params * 4 per stage. A weight
//                   version is alive while it is the newest one, or while an
//                   op that reads it (F, B, BI, BW, Recompute) is still to run;
//                   U (or PullWeights, async data parallel) makes the version
//                   it names when it ends, if that is newer than the current.
//  comm buffers     a message's bytes on its receiver, from arrival until the
//                   receive ends; ZeRO 2 and 3's reduce-scatter bucket and
//                   ZeRO 3's gathered units, from the start
//  workspace        the software's own memory, from the start: the CUDA
//                   context, the GEMM library's workspace and NCCL's buffers
//                   (runtime_memory.h; 0 on a CPU and in unit mode)
//
// Unit-cost simulations have no StageProfiles; memory is then counted in
// "activation units": each stage has params = 1 and activation_bytes = 1
// (weights 1, gradients 1, one unit per in-flight micro-batch, one per extra
// weight version) and input_bytes = 0, so peaks still compare schedules.
//
// Changes at the same instant are applied together: a sample is the state
// after every change at its time, and peaks are taken over samples.
#pragma once

#include <climits>
#include <cstdint>
#include <vector>

#include "core/schedule/schedule.h"
#include "core/sim/cost_model.h"
#include "core/trace/trace_events.h"

namespace pipelab {

// What one pipeline stage holds (bytes, or activation units in unit mode).
struct StageMemory {
  int64_t weights = 0;
  int64_t gradients = 0;
  int64_t optimizer_state = 0;
  int64_t activations = 0;  // per in-flight micro-batch
  int64_t kept_input = 0;   // per micro-batch under recomputation: what F keeps
  int64_t recomputed = 0;   // per micro-batch under recomputation: what Recompute puts back
  int64_t recompute_forward_peak =
      0;  // per micro-batch under recomputation: what F holds at its peak
  int64_t backward_working = 0;        // per running B
  int64_t split_backward_working = 0;  // per running BI
  int64_t split_backward_kept = 0;     // per micro-batch between its BI and BW
  int64_t loss_gradient = 0;           // per micro-batch between its F and B (or BI), last stage
  int64_t collective_buffers = 0;      // ZeRO 2 and 3's buckets and gathered units, from the start
};
// Weights, gradients and optimizer state are one device's share under ZeRO
// stage `zero` over `dp` replicas (zero_sharding.h); unit costs ignore ZeRO.
StageMemory stage_memory(const CostModel& cost, int stage, int zero = 0, int dp = 1, int ep = 1,
                         bool reshard_after_forward = true);

struct DeviceMemoryPeaks {
  MemoryBytes peak_bytes{};
  int64_t peak_total_bytes = 0;
  int peak_inflight_microbatches = 0;
  int weight_versions = 1;
};

class MemoryModel {
 public:
  MemoryModel(const Schedule& schedule, const CostModel& cost);

  // The simulator reports each device's compute, offload, reload, push and
  // pull ops, with their start and end times.
  void op_started(const Op& op, double t);
  void op_finished(const Op& op, double t);
  // A message's bytes wait in a buffer on the receiver between these two.
  void message_arrived(int device, int64_t bytes, double t);
  void message_consumed(int device, int64_t bytes, double t);

  // Per device peaks; appends the samples (per device, in time order) when
  // `samples` is not null.
  std::vector<DeviceMemoryPeaks> finish(std::vector<MemorySample>* samples);

 private:
  struct Change {
    double t;
    MemoryCategory category;
    int64_t bytes;
  };
  static constexpr int kNoVersion = INT_MIN;
  // Weight versions of one stage on one device; vectors indexed by version.
  struct VersionState {
    std::vector<int> readers_left;  // ops still to read the version
    std::vector<char> born;         // exists (initial, or written by a U that ended)
    int current = kNoVersion;       // newest born version
    int alive = 0;
  };
  struct DeviceState {
    std::vector<Change> changes;
    std::vector<StageMemory> chunk_memory;  // per chunk
    std::vector<char> gradients_allocated;  // per chunk
    std::vector<VersionState> versions;     // per chunk
    bool recompute = false;
    int inflight = 0;
    DeviceMemoryPeaks peaks;
  };

  void add(int device, double t, MemoryCategory category, int64_t bytes);
  void init_versions(int device);
  void version_read_done(int device, int chunk, int version, double t);
  void version_written(int device, int chunk, int version, double t);
  // What an OFFLOAD parks on the host: its micro-batch's activations, or (a
  // step's, optimizer offloading) the stage's gradients.
  static int64_t offloaded_bytes(const Op& op, const StageMemory& stage);
  int chunk_of(const Op& op) const { return schedule_.layout().chunk_of_stage(op.stage); }

  const Schedule& schedule_;
  std::vector<DeviceState> devices_;
};

}  // namespace pipelab
