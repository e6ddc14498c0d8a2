// Helpers shared by the schedule tests.
#pragma once

#include <functional>
#include <span>
#include <string>
#include <vector>

#include "core/schedule/schedule.h"
#include "core/schedule/validator.h"

namespace pipelab::testing {

// The report's errors, one per line, for failure messages.
std::string errors_text(const ValidationReport& report);

// True when some error contains every one of `parts`.
bool has_error(const ValidationReport& report, const std::vector<std::string>& parts);

// The ops of one kind, in program order.
std::vector<Op> ops_of_kind(const std::vector<Op>& ops, OpKind kind);

// A device's compute ops in torch.distributed.pipelining's action notation:
// "<stage><F|B|I|W><micro-batch>" (B a fused backward, I a BI, W a BW), spaced.
std::string torch_notation(const std::vector<Op>& ops);

// One (p, m) case of a torch.distributed.pipelining schedule: each rank's
// compute order in torch_notation, as torch builds it.
struct TorchOrder {
  int pp;
  int microbatches;
  std::vector<std::string> ranks;  // ranks[r] = rank r's compute order
};

// Expects generate(pp, m) to give every rank of every case torch's order.
void expect_torch_orders(const std::function<Schedule(int, int)>& generate,
                         std::span<const TorchOrder> orders);

// Makespan of a compute-only schedule when F costs f, BI b, BW w and a fused B
// b + w: each op starts once its device is free and its inputs exist (F after
// the previous stage's F, B/BI after its F and the next stage's B/BI, BW after
// its BI). Messages are free. Returns -1 if the schedule deadlocks.
double unit_time_makespan(const Schedule& compute, double f, double b, double w);

}  // namespace pipelab::testing
