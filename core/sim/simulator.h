// Simulator: a discrete-event run of a lowered schedule under a cost model.
// Produces the same event stream a real executor does, plus summary metrics.
//
// Execution semantics
//  - Each device runs its ops in program order, one at a time, on its own
//    clock starting at 0. A compute op (F, B, BI, BW, U, Recompute) starts when
//    the device reaches it and lasts CostModel::duration().
//  - Sends are asynchronous: a Send (or PushGradient) costs the device no time.
//    Its message travels on the directed link sender -> receiver (pushes on the
//    sender's link to the parameter server); a link carries one message at a
//    time, in the sender's program order, so the message starts at
//    max(issue time, link free) and arrives duration() later. The Send's trace
//    event is that transfer interval.
//  - A Recv completes when its message has arrived: its interval runs from the
//    moment the device reaches it to max(that moment, arrival), i.e. waiting
//    for and receiving the data. It counts as communication, not busy time.
//  - An AllReduce starts when every member of its group has reached it and
//    lasts collective_duration() (the ring formula) for all of them; each
//    member's interval runs from its own arrival to the common end.
//  - Overlapped gradient reduction (SimulationOptions::overlap_gradient_reduction,
//    as DDP and Megatron-LM's --overlap-grad-reduce do): a data-parallel
//    AllReduce of a stage's gradients runs on the device's communication lane
//    and costs the device no time. It is split into buckets of
//    kGradientBucketBytes; bucket i of n is ready when the stage's last
//    gradient op of the step (its last B or BW) is (i+1)/n done, and starts
//    once every member has it ready and the lane is free. The U after it waits
//    for the last bucket: only what does not fit under the backward (and
//    whatever else runs before U) is exposed, and counts as communication.
//  - ZeRO (schedule.zero, lowering.h): its reduce-scatters of gradients
//    overlap as the all-reduce does (a per-micro-batch one under zero 2 and 3
//    is ready as its B or BW is). Its all-gathers of weights, when the run
//    overlaps, run on the lane too, from when every member has issued them:
//    zero 3's one compute op ahead of the F, B or BI that reads them (FSDP's
//    prefetch), which waits for its gather's end (a Recompute for its B's);
//    zero 1 and 2's after U, which every later op reading the stage's
//    weights waits for (Megatron-LM's overlapped parameter gather). Without
//    overlap they block in program order, as every other collective.
//  - A PullWeights of step t first waits until every PushGradient of step
//    t - staleness in its data-parallel group has arrived, then lasts its
//    duration().
//  - Offload and Reload run on the device's copy lane (a copy engine beside
//    its compute, one copy at a time in program order): a copy starts at
//    max(issue time, lane free) and lasts duration() (bytes / host-link
//    bandwidth); issuing one costs the device no time. A B or BI whose
//    micro-batch was reloaded starts no earlier than its Reload's end: the
//    copy time not hidden behind the op before it is exposed as idle time.
//  - Optimizer offloading: U runs on the host, host_update_duration() long,
//    once its OFFLOAD (the gradients) has ended; the RELOAD after it starts
//    when U ends, and the device's next op that reads weights waits for it.
//    The device itself goes on meanwhile; busy time counts none of the three.
//  - Busy time = time in compute ops. Bubble fraction = 1 - sum(busy) /
//    (devices x makespan); per device 1 - busy / makespan. The makespan is the
//    latest end of any op. DeviceSimStats::comm is the time a device spends
//    inside blocking communication ops (Recv, AllReduce, Pull); asynchronous
//    transfers (sends, pushes, copies to and from the host) are not counted there.
// With comm = 0 and uniform unit costs, GPipe and 1F1B come out at exactly
// (p-1)/(m+p-1). Memory accounting is described in memory_model.h.
//
// Cost: O(ops) after an O(ops) matching pass (core/schedule/op_matching.h); memory samples
// are sorted per device.
#pragma once

#include <vector>

#include "core/schedule/schedule.h"
#include "core/sim/cost_model.h"
#include "core/sim/zero_sharding.h"
#include "core/trace/trace_events.h"

namespace pipelab {

struct DeviceSimStats {
  int device = 0;
  double busy = 0;                 // time in compute ops
  double comm = 0;                 // time in communication ops
  double bubble_fraction = 0;      // 1 - busy / makespan
  MemoryBytes peak_bytes{};        // each category's peak
  int64_t peak_total_bytes = 0;    // peak of the sum (not the sum of peaks)
  int peak_inflight_microbatches = 0;  // forwards whose backward has not finished
  int weight_versions = 1;         // most weight versions alive at once
};

struct SimulationResult {
  Trace trace;                     // events (and memory samples) on the simulated clock
  double makespan = 0;
  double bubble_fraction = 0;      // 1 - sum(busy) / (devices x makespan)
  double bubble_fraction_theory = 0;  // the schedule's textbook formula (NaN if none)
  UnitCosts formula_costs;            // the f, b, w (stage 0's) that formula was given
  std::vector<DeviceSimStats> per_device;
  double microbatches_per_time = 0;   // throughput: micro-batches (all replicas) per unit time
};

// Throws std::invalid_argument if the schedule is not lowered or deadlocks.
SimulationResult simulate(const Schedule& lowered, const CostModel& cost);

// What to keep besides the metrics (large runs can skip the per-op stream),
// and whether gradient reduction overlaps the backward.
struct SimulationOptions {
  bool record_events = true;  // SimulationResult::trace.events
  bool record_memory = true;  // SimulationResult::trace.memory
  bool overlap_gradient_reduction = false;
  // Synchronous runs only, for speed: simulate replica 0's devices alone.
  // Every replica runs the same ops at the same cost, so a collective across
  // replicas completes when replica 0's members have joined, at the cost of
  // all its members. per_device then holds replica 0's devices and the bubble
  // is theirs; the makespan, throughput and peaks are the whole run's. Throws
  // std::invalid_argument for asynchronous data parallelism (a parameter
  // server waits for every replica).
  bool first_replica_only = false;
};

SimulationResult simulate(const Schedule& lowered, const CostModel& cost,
                          const SimulationOptions& options);

}  // namespace pipelab
