// validate_schedule: checks a compute-only or lowered schedule in time linear
// in its op count (pipedream-2bw's live-version count adds a log factor). The checks run in order;
// when the ops' own fields are wrong (a stage out of range, an op on the wrong device) the later
// checks are skipped, as their tables would be meaningless.
#include "core/schedule/validator.h"

#include <algorithm>
#include <string>
#include <vector>

#include "core/schedule/op_matching.h"
#include "core/schedule/schedule_stats.h"
#include "core/schedule/wait_graph.h"

namespace pipelab {
namespace {

constexpr size_t kMaxReportedErrors = 50;
constexpr int kAbsent = -1;

// A placeholder op, to name a pass that should exist but does not.
Op missing_op(OpKind kind, int device, int stage, int microbatch, int step) {
  Op op;
  op.kind = kind;
  op.device = device;
  op.stage = stage;
  op.chunk = 0;
  op.microbatch = microbatch;
  op.step = step;
  return op;
}

class Validator {
 public:
  explicit Validator(const Schedule& schedule)
      : s_(schedule),
        layout_(schedule.layout()),
        stages_(schedule.stages()),
        m_(schedule.microbatches),
        graph_(ops_per_device(schedule)) {}

  ValidationReport run() {
    if (!check_shape() || !check_op_fields()) return finish();
    index_ops();
    check_passes();
    if (s_.lowered) {
      check_transfers();
      for (CommGroup group : kCollectiveGroups) check_collectives(group);
      check_parameter_server();
      check_optimizer_offload();
    }
    add_data_dependencies();
    check_deadlock();
    check_weight_versions();
    return finish();
  }

 private:
  static std::vector<int> ops_per_device(const Schedule& schedule) {
    std::vector<int> counts;
    for (const auto& ops : schedule.devices) counts.push_back(static_cast<int>(ops.size()));
    return counts;
  }

  // ---- reporting ----------------------------------------------------------

  void error(const std::string& message) {
    if (report_.errors.size() < kMaxReportedErrors)
      report_.errors.push_back(message);
    else
      ++unreported_errors_;
  }
  void error(int device, const Op& op, const std::string& rule) {
    if (report_.errors.size() >= kMaxReportedErrors) {
      ++unreported_errors_;
      return;
    }
    error("device " + std::to_string(device) + ", op '" + op_label(op) + "': " + rule);
  }
  ValidationReport finish() {
    if (unreported_errors_ > 0)
      report_.errors.push_back("... and " + std::to_string(unreported_errors_) +
                               " more errors not shown");
    return std::move(report_);
  }

  // ---- layout ---------------------------------------------------------------

  // A compute-only schedule has dp = tp = 1 (check_shape), so device d is rank d.
  int rank_of(int device) const { return layout_.coord_of(device).pipeline_rank; }
  // The device that runs `stage` in the same replica and shard as `device`.
  int neighbour_device(int device, int stage) const { return layout_.pipeline_peer(device, stage); }
  int stage_of(int device, int chunk) const { return layout_.stage_of(rank_of(device), chunk); }

  // Per-micro-batch tables are indexed by (device, chunk, step, micro-batch).
  size_t slot(int device, int chunk, int step, int microbatch) const {
    return ((static_cast<size_t>(device) * s_.chunks + chunk) * s_.steps + step) * m_ + microbatch;
  }
  size_t slot(const Op& op) const { return slot(op.device, op.chunk, op.step, op.microbatch); }
  // Per-step tables by (device, chunk, step).
  size_t step_slot(int device, int chunk, int step) const {
    return (static_cast<size_t>(device) * s_.chunks + chunk) * s_.steps + step;
  }
  const Op& op_at(int device, int index) const { return s_.devices[device][index]; }

  // ---- 1. shape and fields ----------------------------------------------------

  bool check_shape() {
    auto positive = [&](const char* field, int value) {
      if (value < 1)
        error(std::string("schedule: ") + field + " must be at least 1 (got " +
              std::to_string(value) + ")");
    };
    positive("pp", s_.pp);
    positive("dp", s_.dp);
    positive("tp", s_.tp);
    positive("cp", s_.cp);
    positive("chunks", s_.chunks);
    positive("microbatches", s_.microbatches);
    positive("steps", s_.steps);
    if (!report_.ok()) return false;
    if (!s_.lowered && (s_.dp != 1 || s_.tp != 1 || s_.cp != 1))
      error(
          "schedule: a compute-only schedule has dp = tp = cp = 1; lower_schedule adds replicas, "
          "shards and context ranks");
    const int expected = s_.lowered ? s_.dp * s_.tp * s_.cp * s_.pp : s_.pp;
    if (s_.device_count() != expected)
      error("schedule: " + std::to_string(s_.device_count()) + " device lists, expected " +
            std::to_string(expected) + (s_.lowered ? " (dp x tp x cp x pp)" : " (pp)"));
    return report_.ok();
  }

  bool check_op_fields() {
    for (int d = 0; d < s_.device_count(); ++d) {
      for (const Op& op : s_.devices[d]) {
        if (op.device != d) error(d, op, "its device field says " + std::to_string(op.device));
        if (op.stage < 0 || op.stage >= stages_) {
          error(d, op, "stage out of range 0.." + std::to_string(stages_ - 1));
          continue;
        }
        const int rank = layout_.rank_of_stage(op.stage);
        if (rank != rank_of(d))
          error(d, op,
                "on the wrong device: stage " + std::to_string(op.stage) +
                    " runs on pipeline rank " + std::to_string(rank));
        if (op.chunk != layout_.chunk_of_stage(op.stage))
          error(d, op,
                "chunk " + std::to_string(op.chunk) +
                    " should be stage / pp = " + std::to_string(layout_.chunk_of_stage(op.stage)));
        if (op.step < 0 || op.step >= s_.steps)
          error(d, op, "step out of range 0.." + std::to_string(s_.steps - 1));
        const bool microbatch_in_range = op.microbatch >= 0 && op.microbatch < m_;
        // Tensor-parallel collectives belong to a micro-batch, but for the
        // all-reduce of the step's sequence-parallel gradients.
        const bool step_gradients = op.kind == OpKind::AllReduce && op.layer < 0 && op.microbatch == -1;
        const bool per_microbatch =
            op_kind_facts(op.kind).needs_microbatch ||
            (is_collective(op.kind) && op.group == CommGroup::TensorParallel && !step_gradients);
        if (per_microbatch && !microbatch_in_range)
          error(d, op, "micro-batch out of range 0.." + std::to_string(m_ - 1));
        if (!per_microbatch && op.microbatch != -1 && !microbatch_in_range)
          error(d, op, "micro-batch must be -1 or in range 0.." + std::to_string(m_ - 1));
        check_kind_allowed(d, op);
      }
    }
    return report_.ok();
  }

  void check_kind_allowed(int d, const Op& op) {
    const OpKindFacts& facts = op_kind_facts(op.kind);
    if (!s_.lowered) {
      if (!facts.in_compute_schedule)
        error(d, op,
              "a compute-only schedule holds only F, B, BI and BW; lower_schedule adds "
              "the rest");
      return;
    }
    const bool point_to_point = facts.family == OpFamily::PointToPoint;
    if (point_to_point && (op.peer < 0 || op.peer >= s_.device_count()))
      error(d, op, "peer device out of range");
    if (is_collective(op.kind) && op.group == CommGroup::None)
      error(d, op, "a collective needs a group (tensor-, data-, expert- or context-parallel)");
    // Sequence parallelism's, ZeRO's and ring attention's halves of an all-reduce.
    const bool half_collective = op.kind == OpKind::ReduceScatter || op.kind == OpKind::AllGather;
    if (half_collective && op.group == CommGroup::DataParallel && s_.zero == 0)
      error(d, op, "a data-parallel reduce-scatter or all-gather needs ZeRO (zero > 0)");
    if (half_collective && op.group == CommGroup::ExpertParallel)
      error(d, op, "reduce-scatter and all-gather run over a tensor-, data- or context-parallel group");
    if (op.group == CommGroup::ContextParallel && (!half_collective || op.layer < 0 || s_.cp == 1))
      error(d, op, "a context-parallel collective is a transformer block's all-gather or reduce-scatter (cp > 1)");
    if ((op.kind == OpKind::AllToAll) != (op.group == CommGroup::ExpertParallel))
      error(d, op, "all-to-alls run over an expert-parallel group, and that group runs nothing else");
    if (op.kind == OpKind::AllToAll && op.layer < 0) error(d, op, "an all-to-all names its moe layer");
    if (op.kind == OpKind::AllToAll && s_.ep == 1) error(d, op, "all-to-alls need expert parallelism (ep > 1)");
    const bool server_op = facts.family == OpFamily::ParameterServer;
    if (server_op && !s_.async_data_parallel())
      error(d, op, "push/pull only exist with async data parallel (update = async, dp > 1)");
    if (server_op && op.microbatch != -1) error(d, op, "push/pull span the step (micro-batch -1)");
    if (s_.async_data_parallel() &&
        (op.kind == OpKind::Update ||
         (op.kind == OpKind::AllReduce && op.group == CommGroup::DataParallel)))
      error(d, op,
            "async data parallel replaces the data-parallel all-reduce and U with "
            "PUSH_GRAD and PULL_WEIGHTS");
  }

  // ---- 2. where each pass is --------------------------------------------------

  void record(std::vector<int>& table, int d, int index, const char* rule) {
    const Op& op = op_at(d, index);
    int& entry = table[slot(op)];
    if (entry != kAbsent)
      error(d, op, rule);
    else
      entry = index;
  }

  void index_ops() {
    const size_t slots = slot(s_.device_count(), 0, 0, 0);
    for (auto* table :
         {&forward_, &backward_, &weight_grad_, &recompute_, &offload_, &reload_, &recv_activation_,
          &recv_gradient_})
      table->assign(slots, kAbsent);
    const size_t step_slots = step_slot(s_.device_count(), 0, 0);
    push_.assign(step_slots, kAbsent);
    pull_.assign(step_slots, kAbsent);

    const char* twice = "appears twice (each micro-batch runs it once per stage and step)";
    for (int d = 0; d < s_.device_count(); ++d) {
      for (int i = 0; i < static_cast<int>(s_.devices[d].size()); ++i) {
        const Op& op = op_at(d, i);
        switch (op.kind) {
          case OpKind::Forward:
            record(forward_, d, i, twice);
            break;
          case OpKind::Backward:
          case OpKind::BackwardInput:
            record(backward_, d, i,
                   "a second B or BI for this micro-batch (run B, or BI and BW, once)");
            break;
          case OpKind::BackwardWeight:
            record(weight_grad_, d, i, twice);
            break;
          case OpKind::Recompute:
            record(recompute_, d, i, twice);
            break;
          case OpKind::Offload:  // a micro-batch's activations; -1: optimizer offload's
            if (op.microbatch >= 0) record(offload_, d, i, twice);
            break;
          case OpKind::Reload:
            if (op.microbatch >= 0) record(reload_, d, i, twice);
            break;
          case OpKind::RecvActivation:
            record(recv_activation_, d, i, twice);
            break;
          case OpKind::RecvGradient:
            record(recv_gradient_, d, i, twice);
            break;
          case OpKind::PushGradient:
          case OpKind::PullWeights: {
            int& entry =
                (op.kind == OpKind::PushGradient ? push_ : pull_)[step_slot(d, op.chunk, op.step)];
            if (entry != kAbsent)
              error(d, op, "appears twice (one push and one pull per stage and step)");
            else
              entry = i;
            break;
          }
          default:
            break;
        }
      }
    }
  }

  // ---- 3. every pass once, in a sane local order ------------------------------

  void check_passes() {
    for (int d = 0; d < s_.device_count(); ++d) {
      for (int c = 0; c < s_.chunks; ++c) {
        const int stage = stage_of(d, c);
        for (int t = 0; t < s_.steps; ++t) {
          for (int mb = 0; mb < m_; ++mb) check_microbatch_passes(d, c, stage, t, mb);
        }
      }
    }
  }

  void check_microbatch_passes(int d, int c, int stage, int t, int mb) {
    const size_t at = slot(d, c, t, mb);
    const int f = forward_[at], b = backward_[at], w = weight_grad_[at], r = recompute_[at];
    auto missing = [&](OpKind kind, const char* rule) {
      error(d, missing_op(kind, d, stage, mb, t), rule);
    };
    if (f == kAbsent) missing(OpKind::Forward, "missing (every micro-batch needs one F per stage)");
    if (b == kAbsent) {
      missing(OpKind::Backward, "missing (every micro-batch needs one B, or BI and BW, per stage)");
    } else if (op_at(d, b).kind == OpKind::Backward) {
      if (w != kAbsent) error(d, op_at(d, w), "BW after a fused B (use BI and BW, or B alone)");
    } else if (w == kAbsent) {
      missing(OpKind::BackwardWeight, "missing (a BI needs its BW)");
    } else if (w < b) {
      error(d, op_at(d, w), "runs before its BI (BW needs BI's output gradient)");
    }
    if (f != kAbsent && b != kAbsent && b < f) error(d, op_at(d, b), "runs before its own F");
    if (w != kAbsent && f != kAbsent && w < f) error(d, op_at(d, w), "runs before its own F");
    if (s_.lowered && s_.recompute && b != kAbsent && r == kAbsent)
      error(d, op_at(d, b), "no RECOMPUTE before it (the schedule recomputes activations)");
    if (r != kAbsent) {
      if (!s_.recompute) error(d, op_at(d, r), "recompute is off for this schedule");
      if ((f != kAbsent && r < f) || (b != kAbsent && r > b))
        error(d, op_at(d, r), "must run between its F and its B/BI");
    }
    check_host_transfers(d, at, f, b);
  }

  // Optimizer offloading: each U is OFFLOAD U RELOAD (micro-batch -1) of its
  // stage and step, and a step's OFFLOAD or RELOAD exists only there.
  void check_optimizer_offload() {
    const bool on_host = s_.offload == OffloadMode::Optimizer;
    for (int d = 0; d < s_.device_count(); ++d) {
      const std::vector<Op>& ops = s_.devices[d];
      auto is_update_of = [&](int i, const Op& op) {
        return i >= 0 && i < static_cast<int>(ops.size()) && ops[i].kind == OpKind::Update &&
               ops[i].stage == op.stage && ops[i].step == op.step;
      };
      auto is_transfer_of = [&](int i, OpKind kind, const Op& update) {
        return i >= 0 && i < static_cast<int>(ops.size()) && ops[i].kind == kind && ops[i].microbatch == -1 &&
               ops[i].stage == update.stage && ops[i].step == update.step;
      };
      for (int i = 0; i < static_cast<int>(ops.size()); ++i) {
        const Op& op = ops[i];
        const bool step_transfer = op_kind_facts(op.kind).family == OpFamily::HostTransfer && op.microbatch == -1;
        if (step_transfer && !on_host)
          error(d, op, "a step's OFFLOAD or RELOAD belongs to optimizer offloading (offload = optimizer)");
        else if (step_transfer && !is_update_of(op.kind == OpKind::Offload ? i + 1 : i - 1, op))
          error(d, op, op.kind == OpKind::Offload ? "must come right before its stage's U (it sends U's gradients)"
                                                 : "must come right after its stage's U (it brings back U's weights)");
        if (on_host && op.kind == OpKind::Update &&
            (!is_transfer_of(i - 1, OpKind::Offload, op) || !is_transfer_of(i + 1, OpKind::Reload, op)))
          error(d, op, "needs an OFFLOAD right before it and a RELOAD right after it (the update runs on the host)");
      }
    }
  }

  // OFFLOAD after the micro-batch's F, its RELOAD after that and before its B/BI.
  void check_host_transfers(int d, size_t at, int f, int b) {
    const int o = offload_[at], r = reload_[at];
    if (o != kAbsent) {
      if (s_.offload != OffloadMode::Activations)
        error(d, op_at(d, o), "offload is off for this schedule (offload = none)");
      if (f != kAbsent && o < f) error(d, op_at(d, o), "runs before its own F (it moves F's activations)");
      if (r == kAbsent) error(d, op_at(d, o), "has no RELOAD (its backward needs the activations back)");
    }
    if (r != kAbsent) {
      if (o == kAbsent || r < o) error(d, op_at(d, r), "has no OFFLOAD before it");
      if (b != kAbsent && r > b) error(d, op_at(d, r), "runs after its B/BI (the backward reads what it brings back)");
    }
  }

  // ---- 4. point-to-point messages ------------------------------------------------

  void check_transfers() {
    matched_.assign(slot(s_.device_count(), 0, 0, 0) * 2, 0);  // activation, gradient
    for (int d = 0; d < s_.device_count(); ++d) {
      for (int i = 0; i < static_cast<int>(s_.devices[d].size()); ++i) {
        const Op& op = op_at(d, i);
        if (is_send(op.kind)) check_send(d, i, op.kind == OpKind::SendActivation);
      }
    }
    for (int d = 0; d < s_.device_count(); ++d) {
      for (int i = 0; i < static_cast<int>(s_.devices[d].size()); ++i) {
        const Op& op = op_at(d, i);
        if (is_receive(op.kind)) check_recv(d, i, op.kind == OpKind::RecvActivation);
        if (op.kind == OpKind::Forward) check_input_arrives(d, i, true);
        if (computes_input_gradient(op.kind)) check_input_arrives(d, i, false);
      }
    }
  }

  void check_send(int d, int index, bool activation) {
    const Op& op = op_at(d, index);
    const int target = message_peer_stage(op);
    if (target < 0 || target >= stages_) {
      error(d, op,
            activation ? "the last stage has no next stage to send to"
                       : "the first stage has no previous stage to send to");
      return;
    }
    const int expected = neighbour_device(d, target);
    if (expected == d) {
      error(d, op, "sends to its own device (stages on one device exchange no messages)");
      return;
    }
    if (op.peer != expected) {
      error(d, op,
            "sends to d" + std::to_string(op.peer) + ", but stage " + std::to_string(target) +
                " of this replica and shard runs on d" + std::to_string(expected));
      return;
    }
    const auto& producers = activation ? forward_ : backward_;
    const int produced_at = producers[slot(op)];
    if (produced_at == kAbsent || produced_at > index)
      error(d, op, activation ? "sent before its F has run" : "sent before its B/BI has run");
    const size_t receiver_slot =
        slot(expected, layout_.chunk_of_stage(target), op.step, op.microbatch);
    const int recv = (activation ? recv_activation_ : recv_gradient_)[receiver_slot];
    if (recv == kAbsent) {
      error(d, op,
            std::string("unmatched: d") + std::to_string(expected) + " has no " +
                op_kind_name(op_kind_facts(op.kind).other_end) + " for it");
      return;
    }
    if (op_at(expected, recv).peer != d) return;  // reported with the receive
    char& matched = matched_[receiver_slot * 2 + (activation ? 0 : 1)];
    if (matched) {
      error(d, op, "a second send for the same receive");
      return;
    }
    matched = 1;
    graph_.add_edge(graph_.op_node(d, index), graph_.op_node(expected, recv));
  }

  void check_recv(int d, int index, bool activation) {
    const Op& op = op_at(d, index);
    const int source = message_peer_stage(op);
    const char* send_name = op_kind_name(op_kind_facts(op.kind).other_end);
    if (source < 0 || source >= stages_) {
      error(d, op,
            activation ? "the first stage receives no activation"
                       : "the last stage receives no gradient");
      return;
    }
    const int expected = neighbour_device(d, source);
    if (op.peer != expected) {
      error(d, op,
            "receives from d" + std::to_string(op.peer) + ", but stage " + std::to_string(source) +
                " of this replica and shard runs on d" + std::to_string(expected));
      return;
    }
    if (!matched_[slot(op) * 2 + (activation ? 0 : 1)])
      error(d, op,
            std::string("unmatched: no ") + send_name + " from stage " + std::to_string(source) +
                " on d" + std::to_string(expected) + " for it (it would wait forever)");
  }

  // A forward (backward) whose input comes from another device needs a
  // receive before it on its own device.
  void check_input_arrives(int d, int index, bool forward) {
    const Op& op = op_at(d, index);
    const int source = forward ? op.stage - 1 : op.stage + 1;
    if (source < 0 || source >= stages_) return;
    const int source_device = neighbour_device(d, source);
    if (source_device == d) return;  // same device: program order carries it
    const int recv = (forward ? recv_activation_ : recv_gradient_)[slot(op)];
    if (recv == kAbsent || recv > index)
      error(d, op,
            std::string("needs a ") + (forward ? "RECV_ACT" : "RECV_GRAD") +
                " before it (its input comes from stage " + std::to_string(source) + " on d" +
                std::to_string(source_device) + ")");
  }

  // ---- 5. collectives ----------------------------------------------------------

  // Members of a group run their all-reduces of that group in the same order;
  // the k-th of each member form one collective, which ends once all arrive.
  void check_collectives(CommGroup group) {
    for (const std::vector<int>& devices : collective_groups(layout_, group))
      check_collective_group(group, devices);
  }

  void check_collective_group(CommGroup group, const std::vector<int>& devices) {
    std::vector<std::vector<int>> positions(devices.size());
    size_t longest = 0;
    for (size_t k = 0; k < devices.size(); ++k) {
      const auto& ops = s_.devices[devices[k]];
      for (int i = 0; i < static_cast<int>(ops.size()); ++i)
        if (is_collective(ops[i].kind) && ops[i].group == group) positions[k].push_back(i);
      longest = std::max(longest, positions[k].size());
    }
    const char* name = comm_group_text(group);
    for (size_t k = 1; k < devices.size(); ++k) {
      if (positions[k].size() != positions[0].size())
        error("device " + std::to_string(devices[k]) + ": " + std::to_string(positions[k].size()) +
              " " + name + " collectives, but device " + std::to_string(devices[0]) +
              " of its group has " + std::to_string(positions[0].size()) +
              " (members must match one for one)");
    }
    for (size_t n = 0; n < longest; ++n) {
      const int collective = graph_.add_virtual_node();
      const Op* first = nullptr;
      for (size_t k = 0; k < devices.size(); ++k) {
        if (n >= positions[k].size()) continue;
        const int d = devices[k];
        const int index = positions[k][n];
        const Op& op = op_at(d, index);
        if (first == nullptr) {
          first = &op;
        } else if (op.kind != first->kind || op.stage != first->stage || op.step != first->step ||
                   op.microbatch != first->microbatch || op.layer != first->layer) {
          error(d, op,
                std::string("its ") + name + " group's matching collective is '" +
                    op_label(*first) + "' (members must reduce the same tensor)");
        }
        graph_.add_edge(graph_.op_node(d, index), collective);
        if (index + 1 < graph_.op_count(d))
          graph_.add_edge(collective, graph_.op_node(d, index + 1));
      }
    }
  }

  // Async data parallel: one PUSH_GRAD then one PULL_WEIGHTS per stage and
  // step; the pull of step t waits for every replica's push of t - staleness.
  void check_parameter_server() {
    if (!s_.async_data_parallel()) return;
    for (int rank = 0; rank < s_.pp; ++rank) {
      for (int shard = 0; shard < s_.tp; ++shard) {
        for (int c = 0; c < s_.chunks; ++c) {
          for (int t = 0; t < s_.steps; ++t) check_parameter_server_step(rank, shard, c, t);
        }
      }
    }
  }

  void check_parameter_server_step(int rank, int shard, int c, int t) {
    const int stage = layout_.stage_of(rank, c);
    const int pushes_done = graph_.add_virtual_node();  // every replica pushed step t
    for (int r = 0; r < s_.dp; ++r) {
      const int d = layout_.device_of(r, rank, shard);
      const int push = push_[step_slot(d, c, t)];
      const int pull = pull_[step_slot(d, c, t)];
      if (push == kAbsent) error(d, missing_op(OpKind::PushGradient, d, stage, -1, t), "missing");
      if (pull == kAbsent) {
        Op op = missing_op(OpKind::PullWeights, d, stage, -1, t);
        op.weight_version = std::max(0, t + 1 - s_.staleness);
        error(d, op, "missing");
      }
      if (push != kAbsent && pull != kAbsent && pull < push)
        error(d, op_at(d, pull), "pulls before its push");
      if (push != kAbsent) graph_.add_edge(graph_.op_node(d, push), pushes_done);
      const int waiting_step = t + s_.staleness;
      if (waiting_step < s_.steps) {
        const int waiting_pull = pull_[step_slot(d, c, waiting_step)];
        if (waiting_pull != kAbsent) graph_.add_edge(pushes_done, graph_.op_node(d, waiting_pull));
      }
    }
  }

  // ---- 6. deadlock -------------------------------------------------------------

  // Data dependencies no message carries: all of them in a compute-only
  // schedule, those between stages sharing a device in a lowered one.
  void add_data_dependencies() {
    for (int d = 0; d < s_.device_count(); ++d) {
      for (int c = 0; c < s_.chunks; ++c) {
        const int stage = stage_of(d, c);
        for (int t = 0; t < s_.steps; ++t) {
          for (int mb = 0; mb < m_; ++mb) {
            if (stage > 0) add_dependency(forward_, d, c, t, mb, stage - 1);
            if (stage + 1 < stages_) add_dependency(backward_, d, c, t, mb, stage + 1);
          }
        }
      }
    }
  }

  void add_dependency(const std::vector<int>& table, int d, int c, int t, int mb, int source) {
    const int source_device = neighbour_device(d, source);
    if (s_.lowered && source_device != d) return;
    const int to = table[slot(d, c, t, mb)];
    const int from = table[slot(source_device, layout_.chunk_of_stage(source), t, mb)];
    if (to == kAbsent || from == kAbsent) return;
    graph_.add_edge(graph_.op_node(source_device, from), graph_.op_node(d, to));
  }

  void check_deadlock() {
    const std::vector<int> blocked = graph_.first_blocked_ops();
    for (int d = 0; d < static_cast<int>(blocked.size()); ++d) {
      if (blocked[d] == kAbsent) continue;
      error(d, op_at(d, blocked[d]),
            "deadlock: it can never run (it waits, through program order, messages, data "
            "dependencies or collectives, on something that waits for it)");
    }
  }

  // ---- 7. weight versions ------------------------------------------------------

  struct StageVersions {
    int newest = 0;  // lowered: the last version a U wrote or a pull fetched
    int updates = 0;
    int data_parallel_reduces = 0;
    int backwards_done = 0;  // last backward passes (B or BW)
    int complete_steps = 0;  // steps whose m last backward passes are done
    std::vector<int> backwards_in_step;
  };

  int expected_forward_version(const StageVersions& state, int step) const {
    if (s_.async_data_parallel()) return std::max(0, step - s_.staleness);
    if (updates_after_every_backward(s_.kind)) return state.backwards_done;
    if (s_.kind == ScheduleKind::PipeDream2BW) return state.complete_steps;
    return step;
  }

  const char* forward_version_rule() const {
    if (s_.async_data_parallel()) return "async data parallel: step t reads max(0, t - staleness)";
    if (updates_after_every_backward(s_.kind))
      return "pipedream, pipemare: one update per backward done on the stage";
    if (s_.kind == ScheduleKind::PipeDream2BW)
      return "pipedream-2bw: one update per step finished on the stage";
    return "synchronous: step t reads version t";
  }

  void check_weight_versions() {
    for (int d = 0; d < s_.device_count(); ++d) {
      std::vector<StageVersions> states(s_.chunks);
      for (auto& state : states) state.backwards_in_step.assign(s_.steps, 0);
      for (const Op& op : s_.devices[d]) check_version(d, op, states[op.chunk]);
      for (int c = 0; c < s_.chunks; ++c) check_update_count(d, stage_of(d, c), states[c]);
      if (s_.kind == ScheduleKind::PipeDream2BW) {
        for (int c = 0; c < s_.chunks; ++c) {
          const int live = peak_live_weight_versions(s_, d, stage_of(d, c));
          if (live > 2)
            error("device " + std::to_string(d) + ", stage " + std::to_string(stage_of(d, c)) +
                  ": " + std::to_string(live) +
                  " weight versions alive at once (pipedream-2bw keeps at most two)");
        }
      }
    }
  }

  void check_version(int d, const Op& op, StageVersions& state) {
    switch (op.kind) {
      case OpKind::Forward: {
        const int expected = expected_forward_version(state, op.step);
        if (op.weight_version != expected)
          error(d, op,
                "reads weight version " + std::to_string(op.weight_version) + ", expected " +
                    std::to_string(expected) + " (" + forward_version_rule() + ")");
        else if (s_.lowered && op.weight_version != state.newest)
          error(d, op,
                "reads weight version " + std::to_string(op.weight_version) +
                    " but the stage's newest is " + std::to_string(state.newest) +
                    " (a U or PULL_WEIGHTS is missing or misplaced)");
        break;
      }
      case OpKind::Backward:
      case OpKind::BackwardInput:
      case OpKind::BackwardWeight:
      case OpKind::Recompute: {
        check_backward_version(d, op, state);
        if (computes_weight_gradient(op.kind)) {
          ++state.backwards_done;
          if (++state.backwards_in_step[op.step] == m_) ++state.complete_steps;
        }
        break;
      }
      case OpKind::Update:
        check_update(d, op, state);
        break;
      case OpKind::AllReduce:
        // The gradients' all-reduce; synced batch norm's run inside compute
        // ops and name their layer.
        if (op.group == CommGroup::DataParallel && op.layer < 0) ++state.data_parallel_reduces;
        break;
      case OpKind::PushGradient:
        if (state.backwards_in_step[op.step] != m_)
          error(d, op, "pushes before the stage's last backward of its step");
        break;
      case OpKind::PullWeights: {
        const int expected = std::max(0, op.step + 1 - s_.staleness);
        if (op.weight_version != expected)
          error(d, op,
                "fetches version " + std::to_string(op.weight_version) + ", expected " +
                    std::to_string(expected) + " (max(0, step + 1 - staleness))");
        state.newest = op.weight_version;
        break;
      }
      default:
        break;
    }
  }

  // A backward (or the recompute before it) reads its F's version, or under
  // pipemare the stage's newest; its weight_delay is the updates in between.
  void check_backward_version(int d, const Op& op, const StageVersions& state) {
    const int f = forward_[slot(op)];
    if (f == kAbsent) return;
    const int forward_version = op_at(d, f).weight_version;
    if (backward_reads_newest_weights(s_.kind)) {
      if (op.weight_version != state.backwards_done)
        error(d, op,
              "reads weight version " + std::to_string(op.weight_version) + ", expected the stage's newest, " +
                  std::to_string(state.backwards_done) + " (pipemare: a backward reads the current weights)");
    } else if (op.weight_version != forward_version) {
      error(d, op,
            "reads weight version " + std::to_string(op.weight_version) + " but its F read " +
                std::to_string(forward_version) + " (a backward uses its forward's weights)");
    }
    if (op.weight_delay != op.weight_version - forward_version)
      error(d, op,
            "records a delay of " + std::to_string(op.weight_delay) + " updates but reads version " +
                std::to_string(op.weight_version) + " after its F read " + std::to_string(forward_version) +
                " (weight_delay = backward's version - forward's version)");
  }

  void check_update(int d, const Op& op, StageVersions& state) {
    ++state.updates;
    if (s_.data_parallel_size() > 1 && state.data_parallel_reduces < state.updates)
      error(d, op, "no data-parallel ALLREDUCE before it (replicas average gradients first)");
    if (op.weight_version != state.updates)
      error(d, op,
            "writes version " + std::to_string(op.weight_version) + ", expected " +
                std::to_string(state.updates) + " (each U writes the stage's next version)");
    if (updates_after_every_backward(s_.kind)) {
      if (state.updates > state.backwards_done)
        error(d, op, std::string("an update with no backward to apply (") + schedule_name(s_.kind) +
                         " updates once per B)");
    } else {
      if (state.backwards_in_step[op.step] != m_)
        error(d, op, "runs before the stage's last backward of step " + std::to_string(op.step));
      if (op.weight_version != op.step + 1)
        error(d, op,
              "step " + std::to_string(op.step) + "'s update must write version " +
                  std::to_string(op.step + 1));
    }
    state.newest = op.weight_version;
  }

  void check_update_count(int d, int stage, const StageVersions& state) {
    if (!s_.lowered || s_.async_data_parallel()) return;
    const bool per_backward = updates_after_every_backward(s_.kind);
    const int expected = per_backward ? s_.steps * m_ : s_.steps;
    if (state.updates != expected)
      error("device " + std::to_string(d) + ", stage " + std::to_string(stage) + ": " +
            std::to_string(state.updates) + " U in the window, expected " +
            std::to_string(expected) +
            (per_backward ? " (one per backward)" : " (one per step)"));
    const int expected_reduces = s_.data_parallel_size() > 1 ? state.updates : 0;
    if (state.data_parallel_reduces != expected_reduces)
      error("device " + std::to_string(d) + ", stage " + std::to_string(stage) + ": " +
            std::to_string(state.data_parallel_reduces) + " data-parallel all-reduces, expected " +
            std::to_string(expected_reduces) + " (one before each U when dp > 1)");
  }

  const Schedule& s_;
  const DeviceLayout layout_;
  const int stages_;
  const int m_;
  WaitGraph graph_;
  ValidationReport report_;
  size_t unreported_errors_ = 0;

  // Local op index (or kAbsent) per (device, chunk, step, micro-batch).
  std::vector<int> forward_, backward_, weight_grad_, recompute_, offload_, reload_;
  std::vector<int> recv_activation_, recv_gradient_;
  std::vector<char> matched_;  // per receive slot: activation, gradient
  // Local op index per (device, chunk, step).
  std::vector<int> push_, pull_;
};

}  // namespace

ValidationReport validate_schedule(const Schedule& schedule) { return Validator(schedule).run(); }

}  // namespace pipelab
