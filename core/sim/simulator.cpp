#include "core/sim/simulator.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <deque>
#include <map>
#include <limits>
#include <stdexcept>
#include <string>

#include "core/sim/bubble_formula.h"
#include "core/sim/memory_model.h"
#include "core/schedule/op_matching.h"

namespace pipelab {
namespace {

constexpr double kNotYet = std::numeric_limits<double>::quiet_NaN();

// Devices are identified on links by id; the parameter server is kServer.
constexpr int kServer = -1;

struct Link {
  int peer = 0;
  double free_at = 0;  // when the link finishes its last message
};

struct Collective {
  int arrived = 0;
  double start = 0;     // latest arrival so far
  double duration = 0;  // longest of the members' costs
  double end = kNotYet;
  // Overlapped gradient reduction: when each bucket is ready on every member
  // so far, the latest lane-free time among them, and who joined at which op.
  std::vector<double> bucket_ready;
  double lane_free = 0;
  std::vector<std::array<int, 2>> joined;  // (device, pc)
};

struct PushSlot {
  int arrived = 0;
  double last_arrival = 0;
  std::vector<int> waiting;  // devices blocked on a pull of this slot
};

class Simulation {
 public:
  Simulation(const Schedule& schedule, const CostModel& cost, const SimulationOptions& options)
      : schedule_(schedule),
        cost_(cost),
        options_(options),
        matching_(match_schedule_ops(schedule)),
        memory_(schedule, cost),
        devices_(schedule.device_count()),
        arrival_(matching_.message_count, kNotYet),
        collectives_(matching_.group_of_collective.size()),
        push_slots_(matching_.pushes_expected.size()),
        simulated_devices_(
            options.first_replica_only
                ? std::min(schedule.device_count(), schedule.tp * schedule.cp * schedule.pp)
                : schedule.device_count()) {
    if (options_.record_events) events_.resize(matching_.op_count());
    if (options_.first_replica_only && schedule.async_data_parallel())
      throw std::invalid_argument(
          "simulating one replica needs synchronous updates: a parameter server waits for every "
          "replica");
    // How many of each group's members are simulated: a collective completes when they have joined.
    for (const auto& group : matching_.groups) {
      int simulated = 0;
      for (int member : group.members) simulated += is_simulated(member) ? 1 : 0;
      simulated_members_.push_back(simulated);
      group_spans_.push_back(cost_.group_span(group.members));
    }
  }

  void run() {
    for (int d = 0; d < simulated_devices_; ++d) wake(d);
    while (!ready_.empty()) {
      const int device = ready_.back();
      ready_.pop_back();
      devices_[device].queued = false;
      advance(device);
    }
    check_finished();
  }

  SimulationResult result();

 private:
  struct DeviceState {
    int pc = 0;           // next op to run
    double clock = 0;     // when the device is free for it
    bool queued = false;  // in ready_
    int registered = -1;  // global op index of the collective it has joined
    double busy = 0;
    double comm = 0;
    std::vector<Link> links;
    double copy_lane_free_at = 0;  // when the copy lane finishes its last OFFLOAD or RELOAD
    double host_free_at = 0;       // when the host finishes its last update (optimizer offloading)
    double weights_back_at = 0;    // when the last host update's weights are back on the device
    std::map<std::array<int, 3>, double> reloads;  // (stage, step, micro-batch) -> RELOAD's end
    double comm_lane_free_at = 0;  // overlapped gradient reduction: its lane's last bucket's end
    // (stage, step) -> begin and end of the stage's latest gradient op (B or BW)
    std::map<std::array<int, 2>, std::array<double, 2>> last_gradient;
    // (stage, step) -> the overlapped reduction its U waits for
    std::map<std::array<int, 2>, int> reduction_of;
    // ZeRO's all-gathers on the communication lane: per stage, zero 3's
    // gathers in the order their F, B and BI read them, and zero 1 and 2's
    // latest gather after U, which every later op of the stage reads.
    struct UnitGather {
      int id = 0;
      int step = 0;  // of the op that reads it
      int microbatch = 0;
    };
    std::map<int, std::deque<UnitGather>> unit_gathers;
    std::map<int, int> step_gather;
  };

  const std::vector<Op>& ops(int device) const { return schedule_.devices[device]; }
  int global(int device, int pc) const { return matching_.first_op[device] + pc; }

  // Replica 0's devices are 0 .. tp x cp x pp - 1 (device_layout.h).
  bool is_simulated(int device) const { return device < simulated_devices_; }
  int members_to_join(int id) const {
    return simulated_members_[matching_.group_of_collective[id]];
  }

  void wake(int device) {
    if (!is_simulated(device) || devices_[device].queued) return;
    devices_[device].queued = true;
    ready_.push_back(device);
  }

  Link& link(int device, int peer) {
    for (Link& l : devices_[device].links)
      if (l.peer == peer) return l;
    devices_[device].links.push_back({peer, 0});
    return devices_[device].links.back();
  }

  void record(int device, int pc, double begin, double end) {
    const Op& op = ops(device)[pc];
    makespan_ = std::max(makespan_, end);
    if (op.step >= static_cast<int>(step_end_.size())) step_end_.resize(op.step + 1, 0);
    step_end_[op.step] = std::max(step_end_[op.step], end);
    if (options_.record_events) events_[global(device, pc)] = {device, op, begin, end, op.bytes};
  }

  // Runs the device's ops until one has to wait or the program ends.
  void advance(int device) {
    DeviceState& state = devices_[device];
    const std::vector<Op>& program = ops(device);
    while (state.pc < static_cast<int>(program.size())) {
      if (!try_run(device, program[state.pc])) return;
      ++state.pc;
    }
  }

  // Runs one op if it can start now; false when it must wait.
  bool try_run(int device, const Op& op) {
    DeviceState& state = devices_[device];
    switch (op.kind) {
      case OpKind::SendActivation:
      case OpKind::SendGradient:
        send(device, op);
        return true;
      case OpKind::PushGradient:
        push(device, op);
        return true;
      case OpKind::RecvActivation:
      case OpKind::RecvGradient:
        return receive(device, op);
      case OpKind::AllReduce:
      case OpKind::ReduceScatter:
      case OpKind::AllGather:
      case OpKind::AllToAll:
        return all_reduce(device, op);
      case OpKind::PullWeights:
        return pull(device, op);
      case OpKind::Offload:
      case OpKind::Reload:
        host_copy(device, op);
        return true;
      case OpKind::Update:
        if (!reduction_done(device, op)) return false;
        if (schedule_.offload != OffloadMode::Optimizer) break;
        host_update(device, op);
        return true;
      default:
        break;
    }
    if (!weights_gathered(device, op)) return false;
    // Compute ops occupy the device for their duration; a backward first
    // waits for its reloaded activations, any op reading weights for the
    // weights a host update sends back.
    const double duration = cost_.duration(op);
    const double begin = std::max({state.clock, take_reload(device, op),
                                   op_kind_facts(op.kind).reads_weights ? state.weights_back_at : 0.0});
    const double end = begin + duration;
    memory_.op_started(op, begin);
    memory_.op_finished(op, end);
    if (is_compute(op.kind))
      state.busy += duration;
    else
      state.comm += duration;
    if (op_kind_facts(op.kind).work.backward_weight) state.last_gradient[{op.stage, op.step}] = {begin, end};
    record(device, state.pc, begin, end);
    state.clock = end;
    return true;
  }

  // Whether U may run: the overlapped reduction of its stage's gradients (if
  // any) has ended. Waiting for it is exposed communication.
  bool reduction_done(int device, const Op& update) {
    DeviceState& state = devices_[device];
    const auto pending = state.reduction_of.find({update.stage, update.step});
    if (pending == state.reduction_of.end()) return true;
    const double end = collectives_[pending->second].end;
    if (std::isnan(end)) return false;  // woken when the last member joins
    if (end > state.clock) {
      state.comm += end - state.clock;
      state.clock = end;
    }
    state.reduction_of.erase(pending);
    return true;
  }

  // ZeRO: an op that reads weights waits for the all-gather on the lane that
  // brings them (simulator.h); the wait is exposed communication.
  bool weights_gathered(int device, const Op& op) {
    if (!op_kind_facts(op.kind).reads_weights) return true;
    DeviceState& state = devices_[device];
    const bool unit_reader = op.kind == OpKind::Forward || op.kind == OpKind::Recompute ||
                             computes_input_gradient(op.kind);
    std::deque<DeviceState::UnitGather>* units =
        nullptr;  // zero 3: the stage's gathers still to be read
    if (const auto found = state.unit_gathers.find(op.stage); unit_reader && found != state.unit_gathers.end())
      units = &found->second;
    int id = -1;
    // A reader's gather carries its step and micro-batch; a reader without
    // one (reshard_after_forward off) finds the weights held already.
    if (units && !units->empty() &&
        (units->front().step != op.step || units->front().microbatch != op.microbatch))
      units = nullptr;
    if (units && !units->empty())
      id = units->front().id;
    else if (const auto step = state.step_gather.find(op.stage); step != state.step_gather.end())
      id = step->second;
    if (id < 0) return true;
    const double end = collectives_[id].end;
    if (std::isnan(end)) return false;  // woken when the gather's last member joins
    if (end > state.clock) {
      state.comm += end - state.clock;
      state.clock = end;
    }
    // A Recompute reads the weights gathered for its B, which comes next.
    if (units && !units->empty() && op.kind != OpKind::Recompute) units->pop_front();
    return true;
  }

  // ZeRO-Offload copies the reduced gradients to the host before U: that copy
  // waits for the reduction, so there it stays in program order.
  bool overlaps(const Op& op) const {
    return options_.overlap_gradient_reduction && op.group == CommGroup::DataParallel &&
           (op.kind == OpKind::AllReduce || op.kind == OpKind::ReduceScatter) &&
           schedule_.offload != OffloadMode::Optimizer;
  }
  // ZeRO's gathers of weights run on the lane when the run overlaps.
  bool gathers_ahead(const Op& op) const {
    return options_.overlap_gradient_reduction && op.group == CommGroup::DataParallel &&
           op.kind == OpKind::AllGather;
  }

  // A ZeRO all-gather of a stage's weights on the communication lane, from
  // when every member has issued it (one compute op ahead of its reader, or
  // after U) and the lane is free.
  void lane_gather(int device, const Op& op, int id, const std::vector<int>& members) {
    DeviceState& state = devices_[device];
    Collective& collective = collectives_[id];
    if (collective.bucket_ready.empty()) collective.bucket_ready.assign(1, 0.0);
    collective.bucket_ready[0] = std::max(collective.bucket_ready[0], state.clock);
    if (op.microbatch >= 0)
      state.unit_gathers[op.stage].push_back({id, op.step, op.microbatch});
    else
      state.step_gather[op.stage] = id;
    join_lane(device, op, id, members);
  }

  // A data-parallel gradient all-reduce on the communication lane, in buckets
  // that start as the last backward produces them (simulator.h).
  void overlapped_reduction(int device, const Op& op, int id, const std::vector<int>& members) {
    DeviceState& state = devices_[device];
    Collective& collective = collectives_[id];
    const int buckets = std::max(1, static_cast<int>(std::ceil(static_cast<double>(op.bytes) / kGradientBucketBytes)));
    if (collective.bucket_ready.empty()) collective.bucket_ready.assign(buckets, 0.0);
    const auto gradient = state.last_gradient.find({op.stage, op.step});
    const double from = gradient == state.last_gradient.end() ? state.clock : gradient->second[0];
    const double to = gradient == state.last_gradient.end() ? state.clock : gradient->second[1];
    for (int i = 0; i < buckets; ++i)
      collective.bucket_ready[i] = std::max(collective.bucket_ready[i], from + (to - from) * (i + 1) / buckets);
    state.reduction_of[{op.stage, op.step}] = id;
    join_lane(device, op, id, members);
  }

  // Joins `device` to a collective that runs on the members' communication
  // lanes, bucket by bucket (collective.bucket_ready); the last member to
  // join runs it and wakes the others.
  void join_lane(int device, const Op& op, int id, const std::vector<int>& members) {
    DeviceState& state = devices_[device];
    Collective& collective = collectives_[id];
    const int buckets = static_cast<int>(collective.bucket_ready.size());
    collective.lane_free = std::max(collective.lane_free, state.comm_lane_free_at);
    collective.joined.push_back({device, state.pc});
    if (++collective.arrived < members_to_join(id)) return;

    Op bucket = op;
    bucket.bytes = op.bytes / buckets;
    const double bucket_time =
        cost_.collective_duration(bucket, members, group_spans_[matching_.group_of_collective[id]]);
    double t = collective.lane_free;
    double first_start = kNotYet;
    for (int i = 0; i < buckets; ++i) {
      t = std::max(t, collective.bucket_ready[i]);
      if (std::isnan(first_start)) first_start = t;
      t += bucket_time;
    }
    collective.start = first_start;
    collective.end = t;
    for (const auto& [member, pc] : collective.joined) {
      devices_[member].comm_lane_free_at = t;
      record(member, pc, first_start, t);
      if (member != device) wake(member);
    }
  }

  // OFFLOAD or RELOAD on the device's copy lane; the device goes on at once.
  // A step's RELOAD (optimizer offloading) carries what the host update wrote.
  void host_copy(int device, const Op& op) {
    DeviceState& state = devices_[device];
    const bool step_weights = op.kind == OpKind::Reload && op.microbatch < 0;
    const double begin = std::max({state.clock, state.copy_lane_free_at, step_weights ? state.host_free_at : 0.0});
    const double end = begin + cost_.duration(op);
    state.copy_lane_free_at = end;
    memory_.op_started(op, begin);
    memory_.op_finished(op, end);
    if (step_weights)
      state.weights_back_at = end;
    else if (op.kind == OpKind::Reload)
      state.reloads[microbatch_key(op)] = end;
    record(device, state.pc, begin, end);
  }

  // U on the host (optimizer offloading): once the gradients are there (the
  // OFFLOAD before it), one update at a time; the device goes on at once.
  void host_update(int device, const Op& op) {
    DeviceState& state = devices_[device];
    const double begin = std::max({state.clock, state.copy_lane_free_at, state.host_free_at});
    const double end = begin + cost_.host_update_duration(op);
    state.host_free_at = end;
    memory_.op_started(op, begin);
    memory_.op_finished(op, end);
    record(device, state.pc, begin, end);
  }

  // When the activations a B or BI reads are back (0: never offloaded).
  double take_reload(int device, const Op& op) {
    if (!computes_input_gradient(op.kind)) return 0;
    std::map<std::array<int, 3>, double>& reloads = devices_[device].reloads;
    const auto found = reloads.find(microbatch_key(op));
    if (found == reloads.end()) return 0;
    const double end = found->second;
    reloads.erase(found);
    return end;
  }
  static std::array<int, 3> microbatch_key(const Op& op) { return {op.stage, op.step, op.microbatch}; }

  void send(int device, const Op& op) {
    DeviceState& state = devices_[device];
    const int recv = matching_.partner[global(device, state.pc)];
    const int receiver = device_of_op(recv);
    const Op& recv_op = ops(receiver)[recv - matching_.first_op[receiver]];
    Link& l = link(device, receiver);
    const double begin = std::max(state.clock, l.free_at);
    const double arrival = begin + cost_.duration(op);
    l.free_at = arrival;
    arrival_[matching_.partner[recv]] = arrival;
    memory_.message_arrived(receiver, recv_op.bytes, arrival);
    record(device, state.pc, begin, arrival);
    // Wake the receiver if it is already waiting at this receive.
    if (global(receiver, devices_[receiver].pc) == recv) wake(receiver);
  }

  bool receive(int device, const Op& op) {
    DeviceState& state = devices_[device];
    const double arrival = arrival_[matching_.partner[global(device, state.pc)]];
    if (std::isnan(arrival)) return false;
    const double end = std::max(state.clock, arrival);
    memory_.message_consumed(device, op.bytes, end);
    state.comm += end - state.clock;
    record(device, state.pc, state.clock, end);
    state.clock = end;
    return true;
  }

  bool all_reduce(int device, const Op& op) {
    DeviceState& state = devices_[device];
    const int here = global(device, state.pc);
    const int id = matching_.partner[here];
    Collective& collective = collectives_[id];
    const std::vector<int>& members = matching_.groups[matching_.group_of_collective[id]].members;
    if (overlaps(op) || gathers_ahead(op)) {
      if (state.registered != here) {
        state.registered = here;
        if (overlaps(op))
          overlapped_reduction(device, op, id, members);
        else
          lane_gather(device, op, id, members);
      }
      return true;  // the device goes on; its U (or the gather's reader) waits for it
    }
    if (state.registered != here) {
      state.registered = here;
      collective.start = std::max(collective.start, state.clock);
      collective.duration = std::max(
          collective.duration,
          cost_.collective_duration(op, members, group_spans_[matching_.group_of_collective[id]]));
      if (++collective.arrived == members_to_join(id)) {
        collective.end = collective.start + collective.duration;
        for (int member : members)
          if (member != device) wake(member);
      }
    }
    if (std::isnan(collective.end)) return false;
    state.comm += collective.end - state.clock;
    record(device, state.pc, state.clock, collective.end);
    state.clock = collective.end;
    return true;
  }

  void push(int device, const Op& op) {
    DeviceState& state = devices_[device];
    Link& l = link(device, kServer);
    const double begin = std::max(state.clock, l.free_at);
    const double arrival = begin + cost_.duration(op);
    l.free_at = arrival;
    memory_.op_finished(op, arrival);
    record(device, state.pc, begin, arrival);
    const int slot_id = matching_.partner[global(device, state.pc)];
    PushSlot& slot = push_slots_[slot_id];
    slot.last_arrival = std::max(slot.last_arrival, arrival);
    if (++slot.arrived == matching_.pushes_expected[slot_id]) {
      for (int waiter : slot.waiting) wake(waiter);
      slot.waiting.clear();
    }
  }

  bool pull(int device, const Op& op) {
    DeviceState& state = devices_[device];
    const int slot_id = matching_.partner[global(device, state.pc)];
    double ready = state.clock;
    if (slot_id >= 0) {
      PushSlot& slot = push_slots_[slot_id];
      if (slot.arrived < matching_.pushes_expected[slot_id]) {
        slot.waiting.push_back(device);
        return false;
      }
      ready = std::max(ready, slot.last_arrival);
    }
    const double end = ready + cost_.duration(op);
    memory_.op_finished(op, end);
    state.comm += end - state.clock;
    record(device, state.pc, state.clock, end);
    state.clock = end;
    return true;
  }

  int device_of_op(int global_index) const {
    const auto it =
        std::upper_bound(matching_.first_op.begin(), matching_.first_op.end(), global_index);
    return static_cast<int>(it - matching_.first_op.begin()) - 1;
  }

  void check_finished() const {
    std::string stuck;
    int count = 0;
    for (int d = 0; d < simulated_devices_; ++d) {
      const int pc = devices_[d].pc;
      if (pc >= static_cast<int>(ops(d).size())) continue;
      if (++count <= 3) {
        const Op& op = ops(d)[pc];
        stuck += (stuck.empty() ? "" : "; ") + std::string("device ") + std::to_string(d) +
                 " waits at op #" + std::to_string(pc) + " " + op_kind_name(op.kind) + " stage " +
                 std::to_string(op.stage) + " micro-batch " + std::to_string(op.microbatch) +
                 " step " + std::to_string(op.step);
      }
    }
    if (count > 0)
      throw std::invalid_argument("schedule deadlocks (" + std::to_string(count) +
                                  " devices never finish): " + stuck +
                                  "; check the op order and the staleness");
  }

  const Schedule& schedule_;
  const CostModel& cost_;
  SimulationOptions options_;
  ScheduleMatching matching_;
  MemoryModel memory_;
  std::vector<DeviceState> devices_;
  std::vector<int> ready_;
  std::vector<double> arrival_;  // per message: when it arrives (NaN: not sent yet)
  std::vector<Collective> collectives_;
  std::vector<PushSlot> push_slots_;
  std::vector<TraceEvent> events_;
  std::vector<double> step_end_;
  double makespan_ = 0;
  int simulated_devices_ = 0;           // all, or replica 0's (first_replica_only)
  std::vector<int> simulated_members_;  // per group of matching_.groups
  std::vector<std::optional<GroupSpan>> group_spans_;  // per group: where its members sit
};

// The costs the textbook formula needs, read off the cost model (stage 0).
UnitCosts formula_costs(const CostModel& cost) {
  if (cost.is_unit()) return cost.unit_costs();
  Op op;
  op.stage = 0;
  UnitCosts costs;
  op.kind = OpKind::Forward;
  costs.f = cost.duration(op);
  op.kind = OpKind::BackwardInput;
  costs.b = cost.duration(op);
  op.kind = OpKind::BackwardWeight;
  costs.w = cost.duration(op);
  return costs;
}

SimulationResult Simulation::result() {
  SimulationResult result;
  Trace& trace = result.trace;
  trace.source = "simulated";
  trace.time_unit = cost_.is_unit() ? "unit" : "s";
  trace.schedule = schedule_name(schedule_.kind);
  trace.devices = describe_devices(schedule_.dp, schedule_.tp, schedule_.pp, schedule_.chunks,
                                   schedule_.layout().v_shape, schedule_.cp);
  trace.events = std::move(events_);

  result.makespan = makespan_;
  const std::vector<DeviceMemoryPeaks> peaks =
      memory_.finish(options_.record_memory ? &trace.memory : nullptr);
  double total_busy = 0;
  for (int d = 0; d < simulated_devices_; ++d) {
    DeviceSimStats stats;
    stats.device = d;
    stats.busy = devices_[d].busy;
    stats.comm = devices_[d].comm;
    stats.bubble_fraction = makespan_ > 0 ? 1 - stats.busy / makespan_ : 0;
    stats.peak_bytes = peaks[d].peak_bytes;
    stats.peak_total_bytes = peaks[d].peak_total_bytes;
    stats.peak_inflight_microbatches = peaks[d].peak_inflight_microbatches;
    stats.weight_versions = peaks[d].weight_versions;
    result.per_device.push_back(stats);
    total_busy += stats.busy;
  }
  const int devices = simulated_devices_;
  result.bubble_fraction =
      makespan_ > 0 && devices > 0 ? 1 - total_busy / (devices * makespan_) : 0;
  result.formula_costs = formula_costs(cost_);
  try {
    result.bubble_fraction_theory =
        theoretical_bubble(schedule_.kind, schedule_.pp, schedule_.microbatches, schedule_.chunks,
                           result.formula_costs);
  } catch (const std::invalid_argument&) {
    result.bubble_fraction_theory = std::numeric_limits<double>::quiet_NaN();
  }
  const double microbatches = double(schedule_.microbatches) * schedule_.dp * schedule_.steps;
  result.microbatches_per_time = makespan_ > 0 ? microbatches / makespan_ : 0;

  double previous_end = 0;
  for (int step = 0; step < static_cast<int>(step_end_.size()); ++step) {
    StepMetrics metrics;
    metrics.step = step;
    metrics.t_end = step_end_[step];
    metrics.step_time_s = step_end_[step] - previous_end;
    metrics.bubble_simulated = result.bubble_fraction;
    previous_end = step_end_[step];
    trace.steps.push_back(metrics);
  }
  return result;
}

}  // namespace

SimulationResult simulate(const Schedule& lowered, const CostModel& cost) {
  return simulate(lowered, cost, SimulationOptions{});
}

SimulationResult simulate(const Schedule& lowered, const CostModel& cost,
                          const SimulationOptions& options) {
  if (!lowered.lowered)
    throw std::invalid_argument(
        "simulate needs a lowered schedule (sends, receives and updates in); "
        "call lower_schedule() or build_schedule() first");
  if (!cost.is_unit() && static_cast<int>(cost.stages().size()) < lowered.stages())
    throw std::invalid_argument("cost model has " + std::to_string(cost.stages().size()) +
                                " stage profiles but the schedule has " +
                                std::to_string(lowered.stages()) + " stages; profile every stage");
  if (lowered.first_replica_only && !options.first_replica_only)
    throw std::invalid_argument(
        "the schedule holds replica 0's programs alone; simulate it with first_replica_only or "
        "lower every replica");
  Simulation simulation(lowered, cost, options);
  simulation.run();
  return simulation.result();
}

}  // namespace pipelab
