// WeightStash: the weight versions of one pipeline stage (PipeDream's weight
// stashing). The stage's parameter tensors always hold the newest version;
// older versions that a pending backward still needs live in the stash,
// counted as StashedWeights on the device.
//
//   F:   v = note_forward()           the micro-batch reads the current version
//   B:   use(v) ... restore_current()  the backward runs on the version its F read
//        release(v)                    its micro-batch no longer needs v
//   U:   before_update()               keep a copy of the current version if a
//                                      pending backward still needs it
//        ... optimizer step in place ...
//        after_update(new_version)
//
// Synchronous schedules never stash (every backward of a step runs before its
// update); PipeDream keeps up to p - s versions on stage s (p - s - 1 stashed),
// PipeDream-2BW two. Versions are numbered from the start of the run.
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "core/nn/optimizer.h"

namespace pipelab {

class WeightStash {
 public:
  explicit WeightStash(std::vector<Parameter> parameters, int version = 0);
  WeightStash(const WeightStash&) = delete;
  WeightStash& operator=(const WeightStash&) = delete;

  int current() const { return current_; }

  int note_forward();
  // Puts version `version` in the parameter tensors (no-op for the current one).
  void use(int version);
  // Puts the current version back after use().
  void restore_current();
  void release(int version);

  void before_update();
  void after_update(int new_version);

  int versions_alive() const { return 1 + static_cast<int>(stash_.size()); }
  int64_t stashed_bytes() const;
  void clear();  // drops every stashed version (after a stop)

 private:
  void swap_with_stash(int version);

  std::vector<Parameter> parameters_;
  int current_ = 0;
  int in_use_ = -1;                           // version swapped in by use(), or -1
  std::map<int, int> readers_;                // version -> micro-batches still to read it
  std::map<int, std::vector<Tensor>> stash_;  // older versions, one tensor per parameter
};

}  // namespace pipelab
