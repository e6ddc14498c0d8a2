// Helpers shared by the schedule tests.
#pragma once

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

// Makespan of a compute-only schedule when F costs f, BI b, BW w and a fused B
// b + w: each op starts once its device is free and its inputs exist (F after
// the previous stage's F, B/BI after its F and the next stage's B/BI, BW after
// its BI). Messages are free. Returns -1 if the schedule deadlocks.
double unit_time_makespan(const Schedule& compute, double f, double b, double w);

}  // namespace pipelab::testing
