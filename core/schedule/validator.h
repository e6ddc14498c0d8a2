// Validator: checks that a schedule can run and means what it says.
#pragma once

#include <string>
#include <vector>

#include "core/schedule/schedule.h"

namespace pipelab {

struct ValidationReport {
  std::vector<std::string> errors;  // each names the device, op and rule broken
  bool ok() const { return errors.empty(); }
};

// Checks: every micro-batch's forward and backward (or BI and BW) exactly once
// per stage and step; each stage's backward after its forward and after the next
// stage's backward (and each forward after the previous stage's forward); every
// receive matched by exactly one send; no deadlock (program order plus
// send->receive edges form no cycle); weight versions consistent with the
// schedule's semantics (sync: one version per step; pipedream: a backward reads
// its forward's version; 2bw: at most two live versions).
ValidationReport validate_schedule(const Schedule& schedule);

}  // namespace pipelab
