// Replay: the measured op durations of a run laid out on the schedule's
// dependencies by the simulator. On a machine with fewer cores than virtual
// devices the measured timeline shows threads competing for cores; the replay
// shows the shape the schedule would have with one core per device, each op
// taking as long as it was measured to take.
//
// Durations are keyed by op identity (device, kind, stage, chunk, micro-batch,
// step within the window, layer, group) and averaged over the windows and
// repeats measured. Blocking collectives (AllReduce, PullWeights) include
// waiting for the slowest member; their replayed length is the shortest any
// member of the group measured, the one that waited least. Ops never
// measured fall back to the given cost model.
#pragma once

#include <map>
#include <optional>
#include <tuple>

#include "core/schedule/schedule.h"
#include "core/sim/cost_model.h"
#include "core/sim/simulator.h"
#include "core/trace/trace_events.h"

namespace pipelab {

class MeasuredDurations {
 public:
  // Reads the events of `measured` (global steps) for the window schedule
  // `window`: an event of step t counts as step t mod window.steps.
  MeasuredDurations(const Trace& measured, const Schedule& window);

  std::optional<double> lookup(const Op& op) const;
  size_t size() const { return seconds_.size(); }

 private:
  using Key = std::tuple<int, int, int, int, int, int, int, int>;
  Key key_of(const Op& op, int device) const;

  int window_steps_ = 1;
  std::map<Key, double> seconds_;
};

// Simulates `window` (lowered) with the measured durations of `measured`,
// and `fallback`'s for ops that were not measured. The result's trace is on
// the simulated clock (seconds).
SimulationResult replay_measured(const Schedule& window, const Trace& measured,
                                 const CostModel& fallback);

}  // namespace pipelab
