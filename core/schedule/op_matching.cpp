#include "core/schedule/op_matching.h"

#include <algorithm>
#include <cassert>
#include <climits>
#include <stdexcept>
#include <string>

namespace pipelab {
namespace {

// How many groups of a kind a layout has (defined below).
int group_count(const DeviceLayout& layout, CommGroup group);

// A large schedule is read once; the passes after that walk these short lists.
struct OpPosition {
  int device = 0;
  int index = 0;  // in the device's list
};

std::string describe(const Op& op, int device, int position) {
  return "device " + std::to_string(device) + " op #" + std::to_string(position) + " (" +
         op_kind_name(op.kind) + " stage " + std::to_string(op.stage) + " micro-batch " +
         std::to_string(op.microbatch) + " step " + std::to_string(op.step) + ")";
}

// Receives are looked up by (device, direction, chunk), then by (step,
// micro-batch) in a dense table covering the range the receives use.
struct RecvTable {
  int step_min = INT_MAX;
  int step_max = INT_MIN;
  int microbatch_max = -1;
  std::vector<int> recv;  // global op index, -1 where none

  int index(int step, int microbatch) const {
    if (step < step_min || step > step_max || microbatch < 0 || microbatch > microbatch_max)
      return -1;
    return (step - step_min) * (microbatch_max + 1) + microbatch;
  }
};

class RecvTables {
 public:
  RecvTables(int devices, int chunks) : chunks_(chunks), tables_(size_t(devices) * 2 * chunks) {}
  RecvTable& at(int device, OpKind recv_kind, int chunk) {
    const int direction = recv_kind == OpKind::RecvActivation ? 0 : 1;
    return tables_[(size_t(device) * 2 + direction) * chunks_ + chunk];
  }

 private:
  int chunks_;
  std::vector<RecvTable> tables_;
};

class Matcher {
 public:
  explicit Matcher(const Schedule& schedule)
      : schedule_(schedule),
        layout_(schedule.layout()),
        tables_(schedule.device_count(), schedule.chunks) {}

  ScheduleMatching run() {
    number_ops();
    build_groups();
    read_ops();
    match_messages();
    check_collective_counts();
    match_push_pull();
    return std::move(matching_);
  }

 private:
  // Where collectives_run_ counts device d's collectives of `group`.
  static size_t run_index(int device, CommGroup group) {
    return size_t(device) * kCollectiveGroups.size() + (static_cast<size_t>(group) - 1);
  }
  const Op& op_at(OpPosition at) const { return schedule_.devices[at.device][at.index]; }
  int global(OpPosition at) const { return matching_.first_op[at.device] + at.index; }

  void number_ops() {
    const int devices = schedule_.device_count();
    matching_.first_op.assign(devices + 1, 0);
    int64_t total = 0;
    for (int d = 0; d < devices; ++d) {
      matching_.first_op[d] = static_cast<int>(total);
      total += static_cast<int64_t>(schedule_.devices[d].size());
      if (total >= INT_MAX) throw std::invalid_argument("schedule has too many ops to simulate");
    }
    matching_.first_op[devices] = static_cast<int>(total);
    matching_.partner.assign(total, -1);
  }

  void build_groups() {
    for (CommGroup group : kCollectiveGroups)
      for (std::vector<int>& members : collective_groups(layout_, group))
        matching_.groups.push_back({std::move(members)});
    instances_.resize(matching_.groups.size());
    collectives_run_.assign(size_t(schedule_.device_count()) * kCollectiveGroups.size(), 0);
  }

  // The one pass over every op: checks fields, numbers the collectives and
  // notes where the sends, receives, pushes and pulls are.
  void read_ops() {
    for (int d = 0; d < schedule_.device_count(); ++d) {
      const std::vector<Op>& ops = schedule_.devices[d];
      for (int i = 0; i < static_cast<int>(ops.size()); ++i) {
        const Op& op = ops[i];
        check_fields(op, d, i);
        if (is_receive(op.kind)) {
          RecvTable& table = tables_.at(d, op.kind, layout_.chunk_of_stage(op.stage));
          table.step_min = std::min(table.step_min, op.step);
          table.step_max = std::max(table.step_max, op.step);
          table.microbatch_max = std::max(table.microbatch_max, op.microbatch);
          recvs_.push_back({d, i});
        } else if (is_send(op.kind)) {
          sends_.push_back({d, i});
        } else if (is_collective(op.kind)) {
          join_collective(op, d, i);
        } else if (op.kind == OpKind::PushGradient) {
          pushes_.push_back({d, i});
        } else if (op.kind == OpKind::PullWeights) {
          pulls_.push_back({d, i});
        }
      }
    }
  }

  void check_fields(const Op& op, int device, int position) const {
    if (op.device != device)
      throw std::invalid_argument(describe(op, device, position) + " says device " +
                                  std::to_string(op.device) +
                                  "; each op must sit in its device's list");
    if (op.stage < 0 || op.stage >= schedule_.stages())
      throw std::invalid_argument(describe(op, device, position) + ": stage must be in [0, " +
                                  std::to_string(schedule_.stages()) + ")");
    if (op.step < 0)
      throw std::invalid_argument(describe(op, device, position) + ": step must be >= 0");
    if (op.weight_version < 0)
      throw std::invalid_argument(describe(op, device, position) + ": weight_version must be >= 0");
    if (is_send(op.kind) || is_receive(op.kind)) {
      if (op.microbatch < 0)
        throw std::invalid_argument(describe(op, device, position) +
                                    ": sends and receives need a micro-batch >= 0");
      if (layout_.rank_of_stage(op.stage) != layout_.coord_of(device).pipeline_rank)
        throw std::invalid_argument(describe(op, device, position) + ": stage " +
                                    std::to_string(op.stage) + " does not run on this device");
    }
  }

  // The k-th all-reduce of a kind on a device is its group's k-th collective.
  void join_collective(const Op& op, int device, int position) {
    if (op.group == CommGroup::None)
      throw std::invalid_argument(describe(op, device, position) +
                                  ": a collective needs group tensor-parallel, data-parallel or expert-parallel");
    if (op.group == CommGroup::ExpertParallel && layout_.ep == 1)
      throw std::invalid_argument(describe(op, device, position) +
                                  ": an expert-parallel collective needs a plan with ep > 1");
    if (op.group == CommGroup::ContextParallel && layout_.cp == 1)
      throw std::invalid_argument(describe(op, device, position) +
                                  ": a context-parallel collective needs a plan with cp > 1");
    const int g = collective_group_of(layout_, op.group, device);
    int& ordinal = collectives_run_[run_index(device, op.group)];
    if (ordinal == static_cast<int>(instances_[g].size())) {
      instances_[g].push_back(static_cast<int>(matching_.group_of_collective.size()));
      matching_.group_of_collective.push_back(g);
    }
    matching_.partner[matching_.first_op[device] + position] = instances_[g][ordinal];
    ++ordinal;
  }

  void check_collective_counts() const {
    // With replica 0 lowered alone, only its devices run collectives.
    const int devices = schedule_.first_replica_only ? schedule_.tp * schedule_.cp * schedule_.pp
                                                     : schedule_.device_count();
    for (int d = 0; d < devices; ++d)
      for (CommGroup kind : kCollectiveGroups) {
        if (group_count(layout_, kind) == 0) continue;  // no such groups
        const int mine = collectives_run_[run_index(d, kind)];
        const int group_total =
            static_cast<int>(instances_[collective_group_of(layout_, kind, d)].size());
        if (mine != group_total)
          throw std::invalid_argument(
              "device " + std::to_string(d) + " runs " + std::to_string(mine) + " " +
              comm_group_text(kind) + (kind == CommGroup::ExpertParallel ? " all-to-alls" : " all-reduces") +
              " but another member of its group runs " +
              std::to_string(group_total) + "; every member must run each collective");
      }
  }

  void match_messages() {
    // File every receive in its table.
    for (OpPosition at : recvs_) {
      const Op& op = op_at(at);
      RecvTable& table = tables_.at(at.device, op.kind, layout_.chunk_of_stage(op.stage));
      if (table.recv.empty())
        table.recv.assign(size_t(table.step_max - table.step_min + 1) * (table.microbatch_max + 1),
                          -1);
      int& slot = table.recv[table.index(op.step, op.microbatch)];
      if (slot >= 0)
        throw std::invalid_argument(describe(op, at.device, at.index) +
                                    " duplicates an earlier receive; receive each message once");
      slot = global(at);
    }
    // Each send finds its receive; the receive gets a message number.
    for (OpPosition at : sends_) {
      const Op& op = op_at(at);
      const int recv = find_receive(op, at);
      if (matching_.partner[recv] >= 0)
        throw std::invalid_argument(describe(op, at.device, at.index) +
                                    " sends a message another send already sent");
      matching_.partner[recv] = matching_.message_count++;
      matching_.partner[global(at)] = recv;
    }
    for (OpPosition at : recvs_)
      if (matching_.partner[global(at)] < 0)
        throw std::invalid_argument(describe(op_at(at), at.device, at.index) +
                                    " has no matching send");
  }

  int find_receive(const Op& send, OpPosition at) {
    const int to_stage = message_peer_stage(send);
    if (to_stage < 0 || to_stage >= schedule_.stages())
      throw std::invalid_argument(describe(send, at.device, at.index) + " has no stage " +
                                  std::to_string(to_stage) + " to send to");
    const int receiver = layout_.pipeline_peer(at.device, to_stage);
    if (send.peer >= 0 && send.peer != receiver)
      throw std::invalid_argument(
          describe(send, at.device, at.index) + " names peer " + std::to_string(send.peer) +
          " but stage " + std::to_string(to_stage) + " runs on device " + std::to_string(receiver));
    const OpKind recv_kind = op_kind_facts(send.kind).other_end;
    const RecvTable& table = tables_.at(receiver, recv_kind, layout_.chunk_of_stage(to_stage));
    const int index = table.index(send.step, send.microbatch);
    const int recv = index < 0 ? -1 : table.recv[index];
    if (recv < 0)
      throw std::invalid_argument(describe(send, at.device, at.index) + " has no matching " +
                                  op_kind_name(recv_kind) + " on device " +
                                  std::to_string(receiver));
    return recv;
  }

  void match_push_pull() {
    if (schedule_.staleness < 0)
      throw std::invalid_argument("staleness = " + std::to_string(schedule_.staleness) +
                                  " must be >= 0");
    if (pushes_.empty()) return;  // no asynchronous data parallelism
    int max_step = 0;
    for (OpPosition at : pushes_) max_step = std::max(max_step, op_at(at).step);
    const int steps = max_step + 1;
    matching_.pushes_expected.assign(size_t(schedule_.pp) * schedule_.tp * steps, 0);
    const int first_dp_group = schedule_.dp * schedule_.pp;
    auto slot_of = [&](int device, int step) {
      const int dp_group =
          collective_group_of(layout_, CommGroup::DataParallel, device) - first_dp_group;
      return dp_group * steps + step;
    };
    for (OpPosition at : pushes_) {
      const int slot = slot_of(at.device, op_at(at).step);
      matching_.partner[global(at)] = slot;
      ++matching_.pushes_expected[slot];
    }
    for (OpPosition at : pulls_) {
      const int needed_step = op_at(at).step - schedule_.staleness;
      if (needed_step < 0 || needed_step >= steps) continue;
      const int slot = slot_of(at.device, needed_step);
      if (matching_.pushes_expected[slot] > 0) matching_.partner[global(at)] = slot;
    }
  }

  const Schedule& schedule_;
  const DeviceLayout layout_;
  ScheduleMatching matching_;
  RecvTables tables_;
  std::vector<OpPosition> sends_, recvs_, pushes_, pulls_;
  std::vector<std::vector<int>> instances_;  // per group: its collectives, in order
  std::vector<int> collectives_run_;         // per device: [tensor, data, expert] so far
};

}  // namespace

int message_peer_stage(const Op& op) {
  assert(op_kind_facts(op.kind).message_end != MessageEnd::None);
  return op.stage + op_kind_facts(op.kind).peer_stage_offset;
}

namespace {

// How many groups of a kind a layout has, and the number of its first.
int group_count(const DeviceLayout& layout, CommGroup group) {
  if (group == CommGroup::TensorParallel) return layout.dp * layout.pp * layout.cp;
  if (group == CommGroup::DataParallel) return layout.pp * layout.tp;
  // Without context parallelism there is no ring to pass K and V around.
  if (group == CommGroup::ContextParallel) return layout.cp > 1 ? layout.dp * layout.pp * layout.tp : 0;
  // Without expert parallelism there is no group to exchange tokens in.
  return layout.ep > 1 ? layout.dp / layout.ep * layout.pp * layout.tp * layout.cp : 0;
}

int first_group(const DeviceLayout& layout, CommGroup group) {
  int first = 0;
  for (CommGroup earlier : kCollectiveGroups) {
    if (earlier == group) break;
    first += group_count(layout, earlier);
  }
  return first;
}

}  // namespace

const char* comm_group_text(CommGroup group) {
  switch (group) {
    case CommGroup::TensorParallel: return "tensor-parallel";
    case CommGroup::DataParallel: return "data-parallel";
    case CommGroup::ExpertParallel: return "expert-parallel";
    case CommGroup::ContextParallel: return "context-parallel";
    case CommGroup::None: break;
  }
  return "ungrouped";
}

int collective_group_of(const DeviceLayout& layout, CommGroup group, int device) {
  assert(group != CommGroup::None);
  const DeviceCoord coord = layout.coord_of(device);
  const int first = first_group(layout, group);
  if (group == CommGroup::TensorParallel)
    return first + (coord.replica * layout.pp + coord.pipeline_rank) * layout.cp + coord.context;
  if (group == CommGroup::DataParallel) return first + coord.pipeline_rank * layout.tp + coord.shard;
  if (group == CommGroup::ContextParallel)
    return first + (coord.replica * layout.pp + coord.pipeline_rank) * layout.tp + coord.shard;
  return first + (((coord.replica / layout.ep) * layout.pp + coord.pipeline_rank) * layout.tp + coord.shard) *
                     layout.cp +
         coord.context;
}

std::vector<std::vector<int>> collective_groups(const DeviceLayout& layout, CommGroup group) {
  const int first = first_group(layout, group);
  std::vector<std::vector<int>> groups(static_cast<size_t>(group_count(layout, group)));
  if (groups.empty()) return groups;
  for (int device = 0; device < layout.device_count(); ++device)
    groups[collective_group_of(layout, group, device) - first].push_back(device);
  return groups;
}

ScheduleMatching match_schedule_ops(const Schedule& schedule) {
  if (schedule.pp < 1 || schedule.dp < 1 || schedule.tp < 1 || schedule.chunks < 1)
    throw std::invalid_argument("schedule needs pp, dp, tp and chunks >= 1");
  if (schedule.device_count() != schedule.layout().device_count())
    throw std::invalid_argument(
        "schedule has " + std::to_string(schedule.device_count()) +
        " device lists but dp x pp x tp = " + std::to_string(schedule.layout().device_count()) +
        "; lower the schedule for its plan");
  return Matcher(schedule).run();
}

}  // namespace pipelab
