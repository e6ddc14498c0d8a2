// generate_schedule: checks the options, picks the window, and dispatches to
// the generator of the chosen kind.
#include <algorithm>
#include <stdexcept>
#include <string>

#include "core/schedule/generators.h"

namespace pipelab {
namespace {

void fail(const std::string& message) { throw std::invalid_argument(message); }

// Synchronous schedules repeat the same step; step t reads weight version t.
Schedule repeat_steps(Schedule one_step, int steps) {
  Schedule window = one_step;
  window.steps = steps;
  for (size_t device = 0; device < window.devices.size(); ++device) {
    const auto& step_ops = one_step.devices[device];
    auto& ops = window.devices[device];
    ops.reserve(step_ops.size() * steps);
    for (int step = 1; step < steps; ++step) {
      for (Op op : step_ops) {
        op.step = step;
        op.weight_version = step;
        ops.push_back(op);
      }
    }
  }
  return window;
}

}  // namespace

void check_generator_options(const GeneratorOptions& options) {
  const std::string name = schedule_name(options.kind);
  if (options.pp < 1)
    fail("pp must be at least 1 (got " + std::to_string(options.pp) +
         "); use pp = 1 for no pipeline parallelism");
  if (options.microbatches < 1)
    fail("microbatches must be at least 1 (got " + std::to_string(options.microbatches) +
         "); use microbatches = 1 for no micro-batching");
  if (options.chunks < 1)
    fail("chunks must be at least 1 (got " + std::to_string(options.chunks) + "); use chunks = 1");
  if (options.steps < 0)
    fail("steps must be 0 (the default window) or positive (got " + std::to_string(options.steps) +
         "); use steps = 0");
  const bool v_placement = uses_v_placement(options.kind);
  if (v_placement && options.chunks != 2)
    fail(name + " needs chunks = 2 (got " + std::to_string(options.chunks) +
         "): each device holds two virtual stages placed in a V; set chunks = 2");
  if (options.chunks > 1 && options.kind != ScheduleKind::Interleaved1F1B && !v_placement)
    fail("chunks = " + std::to_string(options.chunks) + " needs schedule interleaved-1f1b (got " +
         name + "); set chunks = 1 or choose interleaved-1f1b");
  if (options.kind == ScheduleKind::Interleaved1F1B && options.chunks > 1) {
    const std::string problem = interleaved_microbatches_problem(options.pp, options.microbatches);
    if (!problem.empty()) fail(problem);
  }
  if (options.kind == ScheduleKind::DualPipeV) {
    const std::string problem = dualpipe_v_microbatches_problem(options.pp, options.microbatches);
    if (!problem.empty()) fail(problem);
  }
  if (options.kind == ScheduleKind::PipeDream2BW && options.microbatches < options.pp)
    fail("pipedream-2bw needs microbatches (" + std::to_string(options.microbatches) + ") >= pp (" +
         std::to_string(options.pp) +
         ") so that two weight versions suffice; try microbatches = " + std::to_string(options.pp));
}

int default_steps(ScheduleKind kind, int pp, int microbatches) {
  if (!is_asynchronous(kind)) return 1;
  const int steps_for_two_pipelines = (2 * pp + microbatches - 1) / microbatches;
  return std::max(2, steps_for_two_pipelines + 1);
}

Schedule generate_schedule(const GeneratorOptions& options) {
  check_generator_options(options);
  const int steps = options.steps > 0
                        ? options.steps
                        : default_steps(options.kind, options.pp, options.microbatches);
  const int pp = options.pp;
  const int m = options.microbatches;
  switch (options.kind) {
    case ScheduleKind::PipeDream:
      return generate_pipedream(pp, m, steps);
    case ScheduleKind::PipeDream2BW:
      return generate_pipedream_2bw(pp, m, steps);
    case ScheduleKind::PipeMare:
      return generate_pipemare(pp, m, steps);
    case ScheduleKind::GPipe:
      return repeat_steps(generate_gpipe(pp, m), steps);
    case ScheduleKind::OneFOneB:
      return repeat_steps(generate_1f1b(pp, m), steps);
    case ScheduleKind::Interleaved1F1B:
      return repeat_steps(generate_interleaved_1f1b(pp, m, options.chunks), steps);
    case ScheduleKind::ZeroBubbleH1:
      return repeat_steps(generate_zb_h1(pp, m), steps);
    case ScheduleKind::ZeroBubbleV:
      return repeat_steps(generate_zb_v(pp, m), steps);
    case ScheduleKind::DualPipeV:
      return repeat_steps(generate_dualpipe_v(pp, m), steps);
  }
  fail("unknown schedule kind");
  return {};
}

}  // namespace pipelab
