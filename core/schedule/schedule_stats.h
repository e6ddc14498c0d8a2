// Order-based measures of a schedule: what holds whatever the op costs. The
// simulator reports the same quantities on its clock; tests use these to check
// each generator's defining property.
#pragma once

#include "core/schedule/schedule.h"

namespace pipelab {

// When a micro-batch stops counting as in flight on a stage.
enum class InflightUntil {
  LastBackward,   // its B, or its BW when the backward is split
  InputGradient,  // its B, or its BI when the backward is split
};

// Most micro-batches a device holds activations for at once: forwards done
// whose backward (per `until`) is not, summed over the device's stages.
int peak_inflight_microbatches(const Schedule& schedule, int device,
                               InflightUntil until = InflightUntil::LastBackward);

// Forwards the device runs before its first backward (B or BI): in 1F1B, the
// warm-up forwards plus the first steady-state one.
int forwards_before_first_backward(const Schedule& schedule, int device);

// Most weight versions of `stage` alive at once on `device`: the versions its
// in-flight micro-batches (F done, last backward not) read, plus the newest
// version (written by a U or PullWeights, or read by any op so far when the
// schedule is not lowered). For schedules that stash (under pipemare a stage
// keeps only the newest, whatever its forwards read).
int peak_live_weight_versions(const Schedule& schedule, int device, int stage);

}  // namespace pipelab
