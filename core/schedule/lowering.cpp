// Lowering: expands a compute schedule (pp devices, F/B/BI/BW) to the full
// program of every device of a dp x tp x pp plan. Each device gets its pipeline
// rank's compute ops, and around them:
//   F:     [RECV_ACT] F [ALLREDUCE tp ...] [SEND_ACT]
//   B, BI: [RECV_GRAD] [RECOMPUTE] B [ALLREDUCE tp ...] [SEND_GRAD]
// and, after a stage's last backward (B or BW) of a step, its weight update:
// [ALLREDUCE dp] U, or PUSH_GRAD PULL_WEIGHTS for async data parallel
// (pipedream, pipemare: after every B). Sends and receives are skipped when both stages
// live on the same device.
#include "core/schedule/lowering.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "core/schedule/generators.h"

namespace pipelab {

OpKind tensor_parallel_op_kind(TensorParallelCollective collective) {
  switch (collective) {
    case TensorParallelCollective::ReduceScatter: return OpKind::ReduceScatter;
    case TensorParallelCollective::AllGather: return OpKind::AllGather;
    case TensorParallelCollective::AllReduce: break;
  }
  return OpKind::AllReduce;
}
namespace {

void fail(const std::string& message) { throw std::invalid_argument(message); }

void check_plan(const ParallelPlan& plan) {
  if (plan.dp < 1)
    fail("dp must be at least 1 (got " + std::to_string(plan.dp) +
         "); use dp = 1 for no data parallelism");
  if (plan.tp < 1)
    fail("tp must be at least 1 (got " + std::to_string(plan.tp) +
         "); use tp = 1 for no tensor parallelism");
  if (plan.staleness < 0)
    fail("staleness must be 0 or more (got " + std::to_string(plan.staleness) +
         "); use staleness = 2");
  check_offload(plan);
  check_zero(plan);
  check_context_parallel(plan);
  if (plan.update == UpdateMode::Async && plan.dp > 1 && is_asynchronous(plan.schedule))
    fail(std::string("update = async (a parameter server across replicas) needs a synchronous "
                     "pipeline schedule, and ") +
         schedule_name(plan.schedule) + " is already asynchronous; use update = sync");
}

void check_lowering_inputs(const Schedule& compute, const ParallelPlan& plan,
                           const std::vector<StageProfile>& profiles) {
  check_plan(plan);
  if (compute.lowered)
    fail(
        "lower_schedule needs a compute schedule, but this one is already lowered; "
        "lower the generator's output");
  auto mismatch = [](const char* field, int in_plan, int in_schedule) {
    fail(std::string("plan.") + field + " (" + std::to_string(in_plan) +
         ") differs from the compute schedule's " + field + " (" + std::to_string(in_schedule) +
         "); generate the schedule from the same plan");
  };
  if (plan.pp != compute.pp) mismatch("pp", plan.pp, compute.pp);
  if (plan.chunks != compute.chunks) mismatch("chunks", plan.chunks, compute.chunks);
  if (plan.microbatches != compute.microbatches)
    mismatch("microbatches", plan.microbatches, compute.microbatches);
  if (plan.schedule != compute.kind)
    fail(std::string("plan.schedule (") + schedule_name(plan.schedule) +
         ") differs from the compute schedule's kind (" + schedule_name(compute.kind) +
         "); generate the schedule from the same plan");
  if (compute.device_count() != compute.pp)
    fail("the compute schedule has " + std::to_string(compute.device_count()) +
         " device lists for pp = " + std::to_string(compute.pp) + "; use generate_schedule");
  if (!profiles.empty() && static_cast<int>(profiles.size()) != plan.stages())
    fail("got " + std::to_string(profiles.size()) + " stage profiles for " +
         std::to_string(plan.stages()) + " stages; pass one StageProfile per stage, or none");
  const bool async_data_parallel = plan.update == UpdateMode::Async && plan.dp > 1;
  if (async_data_parallel && compute.steps < plan.staleness + 2)
    fail("async data parallel with staleness " + std::to_string(plan.staleness) +
         " needs a window of at least " + std::to_string(plan.staleness + 2) + " steps (got " +
         std::to_string(compute.steps) + "); generate with steps = 0 (the default) or steps >= " +
         std::to_string(plan.staleness + 2));
}

// Lowers one pipeline rank's compute ops for one (replica, shard, context rank) device.
class DeviceLowering {
 public:
  DeviceLowering(const Schedule& out, const std::vector<StageProfile>& profiles, int device, DeviceCoord coord)
      : out_(out), profiles_(profiles), device_(device), coord_(coord) {
    updates_written_.assign(out.chunks, 0);
  }

  std::vector<Op> lower(const std::vector<Op>& compute_ops) {
    const std::vector<int> last_backward = last_backward_positions(compute_ops);
    const HostTransfers host = host_transfers(compute_ops);
    const std::vector<std::vector<int>> gathers = weight_gathers(compute_ops);
    ops_.reserve(compute_ops.size() * 4);
    for (size_t i = 0; i < compute_ops.size(); ++i) {
      Op op = compute_ops[i];
      op.device = device_;
      if (out_.async_data_parallel()) op.weight_version = pulled_version(op.step);
      for (int unit : gathers[i]) add_data_parallel(OpKind::AllGather, compute_ops[unit], weight_bytes(op.stage));
      if (host.reload_before[i] >= 0) add_host_transfer(OpKind::Reload, compute_ops[host.reload_before[i]]);
      if (op.kind == OpKind::Forward)
        add_forward(op);
      else if (computes_input_gradient(op.kind))  // B or BI: takes the next stage's gradient
        add_backward(op);
      else if (op.kind == OpKind::BackwardWeight)
        add_weight_gradient(op);
      else
        ops_.push_back(op);
      // ZeRO 2 and 3: each micro-batch's gradients become this device's shard.
      if (out_.zero >= 2 && sums_gradients() && computes_weight_gradient(op.kind))
        add_data_parallel(OpKind::ReduceScatter, op, parameter_bytes(op.stage));
      if (host.offload_after[i]) add_host_transfer(OpKind::Offload, op);
      if (updates_after_every_backward(out_.kind)) {
        if (op.kind == OpKind::Backward) add_update(op.stage, op.chunk, op.step, op.microbatch);
      } else if (computes_weight_gradient(op.kind) &&
                 last_backward[op.chunk * out_.steps + op.step] == static_cast<int>(i)) {
        add_update(op.stage, op.chunk, op.step, -1);
      }
    }
    return std::move(ops_);
  }

 private:
  // Activation offloading, per compute op of the rank: whether an OFFLOAD
  // follows it (an F), and which backward's RELOAD is issued just before it
  // (-1: none). A RELOAD is issued one compute op ahead of its backward (the
  // prefetch distance), so the copy overlaps that op. A micro-batch is
  // offloaded only when at least one compute op runs between its OFFLOAD and
  // its RELOAD, i.e. its B/BI comes kMinOffloadDistance or more compute ops
  // after its F; closer ones would save nothing and keep their activations.
  static constexpr int kMinOffloadDistance = 3;
  struct HostTransfers {
    std::vector<char> offload_after;
    std::vector<int> reload_before;
  };
  HostTransfers host_transfers(const std::vector<Op>& compute_ops) const {
    const size_t n = compute_ops.size();
    HostTransfers host{std::vector<char>(n, 0), std::vector<int>(n, -1)};
    if (out_.offload != OffloadMode::Activations) return host;
    // Where each (chunk, step, micro-batch)'s forward is.
    auto slot = [&](const Op& op) {
      return (static_cast<size_t>(op.chunk) * out_.steps + op.step) * out_.microbatches + op.microbatch;
    };
    std::vector<int> forward_at(static_cast<size_t>(out_.chunks) * out_.steps * out_.microbatches, -1);
    for (size_t i = 0; i < n; ++i)
      if (compute_ops[i].kind == OpKind::Forward) forward_at[slot(compute_ops[i])] = static_cast<int>(i);
    for (size_t b = 1; b < n; ++b) {
      if (!computes_input_gradient(compute_ops[b].kind)) continue;
      const int f = forward_at[slot(compute_ops[b])];
      if (f < 0 || static_cast<int>(b) - f < kMinOffloadDistance) continue;
      host.offload_after[f] = 1;
      host.reload_before[b - 1] = static_cast<int>(b);
    }
    return host;
  }

  // ZeRO 3, per compute op of the rank: the ops whose weights are gathered
  // just before it. Every F, B and BI gathers its stage's weights (a
  // Recompute uses its B's); the gather is issued one compute op ahead, so it
  // overlaps that op (FSDP's prefetch), the first ones before op 0. Without
  // resharding after the forward, an F gathers only when no micro-batch of
  // its chunk is between its F and its last backward op (B, or BW after a
  // BI), which hold the weights; backward ops gather nothing.
  std::vector<std::vector<int>> weight_gathers(const std::vector<Op>& compute_ops) const {
    std::vector<std::vector<int>> before(compute_ops.size());
    if (out_.zero < 3 || !sums_gradients()) return before;
    std::vector<int> holding(out_.chunks,
                             0);  // micro-batches between F and last backward, per chunk
    for (size_t i = 0; i < compute_ops.size(); ++i) {
      const Op& op = compute_ops[i];
      bool gathers = op.kind == OpKind::Forward || computes_input_gradient(op.kind);
      if (!out_.reshard_after_forward) {
        gathers = op.kind == OpKind::Forward && holding[op.chunk] == 0;
        if (op.kind == OpKind::Forward) ++holding[op.chunk];
        if (op.kind == OpKind::Backward || op.kind == OpKind::BackwardWeight) --holding[op.chunk];
      }
      if (gathers) before[i == 0 ? 0 : i - 1].push_back(static_cast<int>(i));
    }
    return before;
  }

  // Index of the last B/BW of each (chunk, step) in the rank's compute ops.
  std::vector<int> last_backward_positions(const std::vector<Op>& compute_ops) const {
    std::vector<int> last(static_cast<size_t>(out_.chunks) * out_.steps, -1);
    for (size_t i = 0; i < compute_ops.size(); ++i)
      if (computes_weight_gradient(compute_ops[i].kind))
        last[compute_ops[i].chunk * out_.steps + compute_ops[i].step] = static_cast<int>(i);
    return last;
  }

  // Async data parallel: the version step t's ops read, i.e. the one pulled at
  // the end of step t - 1 (see lowering.h).
  int pulled_version(int step) const { return std::max(0, step - out_.staleness); }

  // The device of `stage` in this device's replica, shard and context rank,
  // or -1 past the ends.
  int device_of(int stage) const {
    if (stage < 0 || stage >= out_.stages()) return -1;
    return out_.device_of_stage(stage, coord_.replica, coord_.shard, coord_.context);
  }
  // Whether other devices hold this one's weights (replicas, context ranks):
  // then the gradients are summed (or scattered) over the data-parallel group.
  bool sums_gradients() const { return out_.data_parallel_size() > 1; }
  bool needs_transfer(int other_device) const {
    return other_device >= 0 && other_device != device_;
  }

  int64_t activation_bytes(int sending_stage) const {
    return profiles_.empty() ? 0 : profiles_[sending_stage].output_bytes;
  }
  int64_t gradient_bytes(int sending_stage) const {
    return profiles_.empty() ? 0 : profiles_[sending_stage].input_bytes;
  }
  int64_t parameter_bytes(int stage) const {
    return profiles_.empty() ? 0 : profiles_[stage].gradient_bytes();
  }
  int64_t weight_bytes(int stage) const { return profiles_.empty() ? 0 : profiles_[stage].weight_bytes(); }
  // This device's share of a stage's `bytes` under ZeRO (what one member of
  // a reduce-scatter keeps, or gives to an all-gather).
  int64_t shard_of(int64_t bytes) const {
    const int64_t members = out_.data_parallel_size();
    return out_.zero == 0 ? bytes : (bytes + members - 1) / members;
  }

  // A data-parallel collective of `about`'s stage (ZeRO's gathers and scatters).
  void add_data_parallel(OpKind kind, const Op& about, int64_t bytes) {
    Op op = comm_op(kind, about, -1, bytes);
    op.group = CommGroup::DataParallel;
    op.weight_version = 0;
    ops_.push_back(op);
  }

  Op comm_op(OpKind kind, const Op& about, int peer, int64_t bytes) const {
    Op op;
    op.kind = kind;
    op.device = device_;
    op.stage = about.stage;
    op.chunk = about.chunk;
    op.microbatch = about.microbatch;
    op.step = about.step;
    op.weight_version = about.weight_version;
    op.peer = peer;
    op.bytes = bytes;
    return op;
  }

  // The collectives of the compute op `after`: its forward ones after F; the
  // backward ones after B, split between BI and BW by with_weight_gradient.
  void add_tensor_parallel_allreduces(const Op& after, bool in_forward) {
    if (out_.tp == 1) return;
    auto add = [&](OpKind kind, int layer, int64_t bytes) {
      add_layer_collective(kind, CommGroup::TensorParallel, after, layer, bytes);
    };
    if (profiles_.empty()) {
      add(OpKind::AllReduce, -1, 0);
      return;
    }
    for (const TensorParallelAllReduce& reduce : profiles_[after.stage].tp_allreduces) {
      if (reduce.in_forward != in_forward) continue;
      if (after.kind == OpKind::BackwardInput && reduce.with_weight_gradient) continue;
      if (after.kind == OpKind::BackwardWeight && !reduce.with_weight_gradient) continue;
      add(tensor_parallel_op_kind(reduce.collective), reduce.layer, reduce.bytes);
    }
  }

  // Synced batch norm's data-parallel all-reduces, run inside the compute op
  // `after` (the forward's after F, the backward's after B or BI).
  void add_batch_statistics_allreduces(const Op& after, bool in_forward) {
    if (out_.dp == 1 || profiles_.empty() || after.kind == OpKind::BackwardWeight) return;
    for (const BatchStatisticsAllReduce& reduce : profiles_[after.stage].batch_statistics_allreduces) {
      if (reduce.in_forward != in_forward) continue;
      add_layer_collective(OpKind::AllReduce, CommGroup::DataParallel, after, reduce.layer, reduce.bytes);
    }
  }

  // Calls `add` for each of a stage's per-layer exchanges that runs in this
  // pass, in the order the pass meets their layers (the backward's last first).
  template <typename Exchange, typename Add>
  static void for_each_in_pass(const std::vector<Exchange>& list, bool in_forward, Add add) {
    auto visit = [&](const Exchange& exchange) {
      if (exchange.in_forward == in_forward) add(exchange);
    };
    if (in_forward)
      std::for_each(list.begin(), list.end(), visit);
    else
      std::for_each(list.rbegin(), list.rend(), visit);
  }

  // A collective of layer `layer` over `group`, run inside the compute op `after`.
  void add_layer_collective(OpKind kind, CommGroup group, const Op& after, int layer, int64_t bytes) {
    Op op = comm_op(kind, after, -1, bytes);
    op.group = group;
    op.layer = layer;
    ops_.push_back(op);
  }

  // Expert parallelism's all-to-alls, run inside the compute op `after` (the
  // forward's after F, the backward's after B or BI), two per moe layer.
  void add_expert_all_to_alls(const Op& after, bool in_forward) {
    if (out_.ep == 1 || profiles_.empty() || after.kind == OpKind::BackwardWeight) return;
    for_each_in_pass(profiles_[after.stage].expert_all_to_alls, in_forward, [&](const ExpertAllToAll& exchange) {
      add_layer_collective(OpKind::AllToAll, CommGroup::ExpertParallel, after, exchange.layer, exchange.bytes);
    });
  }

  // Context parallelism's ring attention, run inside the compute op `after`
  // (the forward's K and V gathered after F; after B or BI, K and V again
  // and their gradients scattered home), block by block.
  void add_context_parallel_exchanges(const Op& after, bool in_forward) {
    if (out_.cp == 1 || profiles_.empty() || after.kind == OpKind::BackwardWeight) return;
    for_each_in_pass(profiles_[after.stage].context_parallel_exchanges, in_forward,
                     [&](const ContextParallelExchange& exchange) {
                       add_layer_collective(exchange.gradients ? OpKind::ReduceScatter : OpKind::AllGather,
                                            CommGroup::ContextParallel, after, exchange.layer, exchange.bytes);
                     });
  }

  void add_forward(const Op& forward) {
    const int previous = device_of(forward.stage - 1);
    const int next = device_of(forward.stage + 1);
    if (needs_transfer(previous))
      ops_.push_back(
          comm_op(OpKind::RecvActivation, forward, previous, activation_bytes(forward.stage - 1)));
    ops_.push_back(forward);
    add_context_parallel_exchanges(forward, true);
    add_tensor_parallel_allreduces(forward, true);
    add_batch_statistics_allreduces(forward, true);
    add_expert_all_to_alls(forward, true);
    if (needs_transfer(next))
      ops_.push_back(
          comm_op(OpKind::SendActivation, forward, next, activation_bytes(forward.stage)));
  }

  void add_backward(const Op& backward) {
    const int previous = device_of(backward.stage - 1);
    const int next = device_of(backward.stage + 1);
    if (needs_transfer(next))
      ops_.push_back(
          comm_op(OpKind::RecvGradient, backward, next, gradient_bytes(backward.stage + 1)));
    if (out_.recompute) {
      Op rebuild = comm_op(OpKind::Recompute, backward, -1, 0);
      rebuild.weight_delay = backward.weight_delay;  // it rebuilds on the weights B reads
      ops_.push_back(rebuild);
    }
    ops_.push_back(backward);
    add_context_parallel_exchanges(backward, false);
    add_tensor_parallel_allreduces(backward, false);
    add_batch_statistics_allreduces(backward, false);
    add_expert_all_to_alls(backward, false);
    if (needs_transfer(previous))
      ops_.push_back(
          comm_op(OpKind::SendGradient, backward, previous, gradient_bytes(backward.stage)));
  }

  // OFFLOAD (after F) or RELOAD (before B/BI) of `about`'s micro-batch's
  // activations, on the device's copy lane.
  void add_host_transfer(OpKind kind, const Op& about) {
    ops_.push_back(comm_op(kind, about, -1, profiles_.empty() ? 0 : profiles_[about.stage].activation_bytes));
  }

  void add_weight_gradient(const Op& backward_weight) {
    ops_.push_back(backward_weight);
    if (!profiles_.empty()) add_tensor_parallel_allreduces(backward_weight, false);
  }

  // The stage's weight update for `step` (or, for pipedream, for one micro-batch).
  void add_update(int stage, int chunk, int step, int microbatch) {
    Op about;
    about.stage = stage;
    about.chunk = chunk;
    about.step = step;
    about.microbatch = microbatch;
    const int64_t bytes = parameter_bytes(stage);
    // Sequence parallelism leaves some gradients partial on each shard
    // (stage_profile.h): the group sums them first, once per step (under zero
    // 2 and 3 this device's slice of them, which is all it holds by then).
    if (out_.tp > 1 && !profiles_.empty() && profiles_[stage].sequence_parallel_gradient_bytes > 0) {
      const int64_t partial = profiles_[stage].sequence_parallel_gradient_bytes;
      Op reduce =
          comm_op(OpKind::AllReduce, about, -1, out_.zero >= 2 ? shard_of(partial) : partial);
      reduce.group = CommGroup::TensorParallel;
      reduce.microbatch = -1;  // the step's, even where U is per micro-batch (pipedream)
      ops_.push_back(reduce);
    }
    if (out_.async_data_parallel()) {
      Op push = comm_op(OpKind::PushGradient, about, -1, bytes);
      push.group = CommGroup::DataParallel;
      push.weight_version = pulled_version(step);
      ops_.push_back(push);
      Op pull = comm_op(OpKind::PullWeights, about, -1, bytes);
      pull.group = CommGroup::DataParallel;
      pull.weight_version = pulled_version(step + 1);
      ops_.push_back(pull);
      return;
    }
    // The step's gradients summed over the replicas: whole (zero 0), or each
    // device's shard (zero 1; zero 2 and 3 scattered every micro-batch's).
    if (sums_gradients() && out_.zero <= 1) add_data_parallel(out_.zero == 0 ? OpKind::AllReduce : OpKind::ReduceScatter, about, bytes);
    // ZeRO-Offload: the gradients go to the host, the host updates, the new weights come back.
    const bool on_host = out_.offload == OffloadMode::Optimizer;
    if (on_host) ops_.push_back(comm_op(OpKind::Offload, about, -1, shard_of(bytes)));
    Op update = comm_op(OpKind::Update, about, -1, 0);
    update.weight_version = ++updates_written_[chunk];  // the version it writes
    ops_.push_back(update);
    if (on_host) ops_.push_back(comm_op(OpKind::Reload, about, -1, shard_of(weight_bytes(stage))));
    // ZeRO 1 and 2: every device updated its shard; the whole weights are
    // gathered for the next step (zero 3 gathers them where they are used).
    if (sums_gradients() && (out_.zero == 1 || out_.zero == 2)) add_data_parallel(OpKind::AllGather, about, weight_bytes(stage));
  }

  const Schedule& out_;
  const std::vector<StageProfile>& profiles_;
  const int device_;
  const DeviceCoord coord_;
  std::vector<int> updates_written_;  // per chunk
  std::vector<Op> ops_;
};

}  // namespace

Schedule lower_schedule(const Schedule& compute, const ParallelPlan& plan,
                        const std::vector<StageProfile>& profiles, bool first_replica_only) {
  check_lowering_inputs(compute, plan, profiles);
  Schedule out = compute;
  out.devices.clear();
  out.dp = plan.dp;
  out.tp = plan.tp;
  out.ep = plan.ep;
  out.zero = plan.zero;
  out.reshard_after_forward = plan.reshard_after_forward;
  out.cp = plan.cp;
  out.update = plan.update;
  out.recompute = plan.recompute;
  out.offload = plan.offload;
  out.staleness = plan.staleness;
  out.lowered = true;
  out.devices.resize(plan.devices());
  out.first_replica_only = first_replica_only;
  // Replica 0's devices come first (device_layout.h).
  const int lowered = first_replica_only ? plan.tp * plan.cp * plan.pp : plan.devices();
  for (int device = 0; device < lowered; ++device) {
    const DeviceCoord coord = device_coord(plan, device);
    DeviceLowering lowering(out, profiles, device, coord);
    out.devices[device] = lowering.lower(compute.devices[coord.pipeline_rank]);
  }
  return out;
}

int window_steps(const ParallelPlan& plan, int steps) {
  if (steps > 0) return steps;
  if (plan.update == UpdateMode::Async && plan.dp > 1) return plan.staleness + 2;
  return default_steps(plan.schedule, plan.pp, plan.microbatches);
}

double schedule_size_estimate(const ParallelPlan& plan, int steps, bool first_replica_only) {
  // Per device and micro-batch and chunk: F, B (or BI and BW), two sends, two
  // receives and a few collectives; counted in doubles so huge plans cannot overflow.
  // ZeRO 2 and 3 add a reduce-scatter and up to two gathers per micro-batch.
  const double per_microbatch = plan.zero >= 2 ? 11.0 : 8.0;
  const double replicas = first_replica_only ? 1.0 : plan.dp;
  return per_microbatch * replicas * plan.tp * plan.cp * plan.pp * plan.chunks *
         double(plan.microbatches) * window_steps(plan, steps);
}

bool replicas_run_alike(const ParallelPlan& plan) {
  return plan.dp > 1 && plan.update == UpdateMode::Sync;
}

Schedule build_schedule(const ParallelPlan& plan, const std::vector<StageProfile>& profiles,
                        int steps, bool first_replica_only) {
  check_plan(plan);
  check_schedule_size(plan, steps, first_replica_only);
  GeneratorOptions options;
  options.kind = plan.schedule;
  options.pp = plan.pp;
  options.microbatches = plan.microbatches;
  options.chunks = plan.chunks;
  options.steps = window_steps(plan, steps);
  return lower_schedule(generate_schedule(options), plan, profiles, first_replica_only);
}

void check_offload(const ParallelPlan& plan) {
  if (plan.offload == OffloadMode::Activations && plan.recompute)
    fail("parallel.offload = activations and parallel.recompute = true both free the activations between "
         "forward and backward; choose one (offload = none, or recompute = false)");
  if (plan.offload == OffloadMode::Optimizer && (is_asynchronous(plan.schedule) || plan.update == UpdateMode::Async))
    fail(std::string("parallel.offload = optimizer runs one host update per step after the gradients are "
                     "complete, which ") +
         (plan.update == UpdateMode::Async ? "update = async" : schedule_name(plan.schedule)) +
         " does not have; use a synchronous schedule with update = sync, or offload = activations");
}

void check_zero(const ParallelPlan& plan) {
  if (plan.zero < 0 || plan.zero > 3)
    fail("parallel.zero = " + std::to_string(plan.zero) +
         " is not a ZeRO stage; use 0 (none), 1 (optimizer state), 2 (and gradients) or 3 (and weights, FSDP)");
  if (plan.zero == 0) return;
  if (is_asynchronous(plan.schedule) || plan.update == UpdateMode::Async)
    fail("parallel.zero = " + std::to_string(plan.zero) + " shards the state that one synchronous step updates, and " +
         (plan.update == UpdateMode::Async ? std::string("update = async") : schedule_name(plan.schedule)) +
         " updates each replica on its own; use a synchronous schedule with update = sync, or zero = 0");
  if (plan.zero >= 2 && plan.pp > 1)
    fail("parallel.zero = " + std::to_string(plan.zero) +
         " reduce-scatters the gradients after every micro-batch's backward, which a pipeline (pp = " +
         std::to_string(plan.pp) + ") would wait on between its stages (DeepSpeed refuses it too); use "
         "zero = 1 with a pipeline, as Megatron-LM's distributed optimizer does, or pp = 1");
  if (!plan.reshard_after_forward && plan.zero != 3)
    fail(
        "parallel.reshard_after_forward = false keeps ZeRO-3's gathered weights from a forward to "
        "its backward, "
        "and parallel.zero = " +
        std::to_string(plan.zero) +
        " keeps them whole anyway; set zero = 3, or remove reshard_after_forward");
}

void check_context_parallel(const ParallelPlan& plan) {
  if (plan.cp < 1)
    fail("parallel.cp = " + std::to_string(plan.cp) + " must be at least 1; use cp = 1 for no context parallelism");
  if (plan.cp > 1 && plan.update == UpdateMode::Async && plan.dp > 1)
    fail("parallel.cp = " + std::to_string(plan.cp) +
         " splits each sequence over ranks that sum their gradients every step, which a parameter server "
         "(update = async) does not do; use update = sync, or cp = 1");
}

void check_schedule_size(const ParallelPlan& plan, int steps, bool first_replica_only) {
  const double ops = schedule_size_estimate(plan, steps, first_replica_only);
  if (ops <= kMaxScheduleOps) return;
  // A plan whose replica 0 would fit is simulated that way by default; say so.
  const bool one_replica_fits = !first_replica_only && replicas_run_alike(plan) &&
                                schedule_size_estimate(plan, steps, true) <= kMaxScheduleOps;
  throw std::invalid_argument(
      "dp x tp x cp x pp x chunks x microbatches = " + std::to_string(plan.dp) + " x " +
      std::to_string(plan.tp) + " x " + std::to_string(plan.cp) + " x " + std::to_string(plan.pp) +
      " x " + std::to_string(plan.chunks) + " x " + std::to_string(plan.microbatches) +
      " makes a schedule of about " + std::to_string(static_cast<long long>(ops)) + " ops" +
      (first_replica_only ? " in one replica" : "") + ", more than the " +
      std::to_string(static_cast<long long>(kMaxScheduleOps)) + " PipeLab builds; " +
      (one_replica_fits
           ? "simulate one replica for all (pipelab-cli simulate without --trace or --csv), or "
             "use fewer devices or micro-batches"
           : "use fewer devices or micro-batches"));
}

}  // namespace pipelab
