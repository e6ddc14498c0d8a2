#include "schedule_test_util.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>

namespace pipelab::testing {

std::string errors_text(const ValidationReport& report) {
  std::string text;
  for (const auto& error : report.errors) text += error + "\n";
  return text;
}

bool has_error(const ValidationReport& report, const std::vector<std::string>& parts) {
  for (const auto& error : report.errors) {
    bool all = true;
    for (const auto& part : parts) all = all && error.find(part) != std::string::npos;
    if (all) return true;
  }
  return false;
}

std::vector<Op> ops_of_kind(const std::vector<Op>& ops, OpKind kind) {
  std::vector<Op> result;
  for (const Op& op : ops)
    if (op.kind == kind) result.push_back(op);
  return result;
}

std::string torch_notation(const std::vector<Op>& ops) {
  std::ostringstream text;
  for (size_t i = 0; i < ops.size(); ++i) {
    const Op& op = ops[i];
    const char kind = op.kind == OpKind::Forward          ? 'F'
                      : op.kind == OpKind::Backward       ? 'B'
                      : op.kind == OpKind::BackwardInput  ? 'I'
                      : op.kind == OpKind::BackwardWeight ? 'W'
                                                          : '?';
    text << (i ? " " : "") << op.stage << kind << op.microbatch;
  }
  return text.str();
}

void expect_torch_orders(const std::function<Schedule(int, int)>& generate,
                         std::span<const TorchOrder> orders) {
  for (const TorchOrder& expected : orders) {
    const Schedule schedule = generate(expected.pp, expected.microbatches);
    ASSERT_EQ(schedule.device_count(), expected.pp);
    for (int rank = 0; rank < expected.pp; ++rank)
      EXPECT_EQ(torch_notation(schedule.devices[rank]), expected.ranks[rank])
          << "p " << expected.pp << " m " << expected.microbatches << " rank " << rank;
  }
}

double unit_time_makespan(const Schedule& compute, double f, double b, double w) {
  const int stages = compute.stages();
  const size_t per_stage = static_cast<size_t>(compute.steps) * compute.microbatches;
  auto key = [&](const Op& op, int stage) {
    return stage * per_stage + static_cast<size_t>(op.step) * compute.microbatches + op.microbatch;
  };
  // Finish times, -1 until done: forwards, input gradients (B or BI), BWs.
  std::vector<double> forward_done(stages * per_stage, -1);
  std::vector<double> input_grad_done(stages * per_stage, -1);
  std::vector<size_t> next(compute.devices.size(), 0);
  std::vector<double> free_at(compute.devices.size(), 0);
  double makespan = 0;
  bool progress = true;
  while (progress) {
    progress = false;
    for (size_t d = 0; d < compute.devices.size(); ++d) {
      const auto& ops = compute.devices[d];
      while (next[d] < ops.size()) {
        const Op& op = ops[next[d]];
        double ready = free_at[d];
        double cost = 0;
        bool inputs_exist = true;
        auto need = [&](const std::vector<double>& done, int stage) {
          if (stage < 0 || stage >= stages) return;
          const double t = done[key(op, stage)];
          if (t < 0) inputs_exist = false;
          ready = std::max(ready, t);
        };
        switch (op.kind) {
          case OpKind::Forward:
            need(forward_done, op.stage - 1);
            cost = f;
            break;
          case OpKind::Backward:
          case OpKind::BackwardInput:
            need(forward_done, op.stage);
            need(input_grad_done, op.stage + 1);
            cost = op.kind == OpKind::Backward ? b + w : b;
            break;
          case OpKind::BackwardWeight:
            need(input_grad_done, op.stage);
            cost = w;
            break;
          default:
            break;
        }
        if (!inputs_exist) break;
        const double finish = ready + cost;
        if (op.kind == OpKind::Forward) forward_done[key(op, op.stage)] = finish;
        if (op.kind == OpKind::Backward || op.kind == OpKind::BackwardInput)
          input_grad_done[key(op, op.stage)] = finish;
        free_at[d] = finish;
        makespan = std::max(makespan, finish);
        ++next[d];
        progress = true;
      }
    }
  }
  for (size_t d = 0; d < compute.devices.size(); ++d)
    if (next[d] < compute.devices[d].size()) return -1;
  return makespan;
}

}  // namespace pipelab::testing
