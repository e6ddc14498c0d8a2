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
//
// Backend-neutral: BasicWeightStash works on any parameter type whose `value`
// points to a movable tensor with clone(MemoryCategory) and bytes(); the CPU
// executor uses WeightStash (core/nn's Parameter), the CUDA executor the same
// class over its device parameters (on a GPU the copy and the swaps are
// queued in the stage's stream order, so kernels see the right version).
#pragma once

#include <cassert>
#include <cstdint>
#include <map>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/nn/optimizer.h"

namespace pipelab {

template <typename ParameterT>
class BasicWeightStash {
 public:
  using TensorT = std::remove_pointer_t<decltype(ParameterT::value)>;

  explicit BasicWeightStash(std::vector<ParameterT> parameters, int version = 0)
      : parameters_(std::move(parameters)), current_(version) {}
  BasicWeightStash(const BasicWeightStash&) = delete;
  BasicWeightStash& operator=(const BasicWeightStash&) = delete;

  int current() const { return current_; }

  int note_forward() {
    ++readers_[current_];
    return current_;
  }

  // Puts version `version` in the parameter tensors (no-op for the current one).
  void use(int version) {
    assert(in_use_ < 0);
    if (version == current_) return;
    swap_with_stash(version);
    in_use_ = version;
  }

  // Puts the current version back after use().
  void restore_current() {
    if (in_use_ < 0) return;
    swap_with_stash(in_use_);
    in_use_ = -1;
  }

  void release(int version) {
    auto readers = readers_.find(version);
    assert(readers != readers_.end() && readers->second > 0);
    if (--readers->second > 0) return;
    readers_.erase(readers);
    stash_.erase(version);  // frees the copy (nothing when it is the current version)
  }

  void before_update() {
    assert(in_use_ < 0);
    auto readers = readers_.find(current_);
    if (readers == readers_.end() || readers->second == 0) return;
    std::vector<TensorT> copy;
    copy.reserve(parameters_.size());
    for (const ParameterT& parameter : parameters_)
      copy.push_back(parameter.value->clone(MemoryCategory::StashedWeights));
    stash_[current_] = std::move(copy);
  }

  void after_update(int new_version) { current_ = new_version; }

  int versions_alive() const { return 1 + static_cast<int>(stash_.size()); }

  int64_t stashed_bytes() const {
    int64_t bytes = 0;
    for (const auto& [version, tensors] : stash_)
      for (const TensorT& tensor : tensors) bytes += tensor.bytes();
    return bytes;
  }

  // Drops every stashed version (after a stop).
  void clear() {
    restore_current();
    stash_.clear();
    readers_.clear();
  }

 private:
  // Swapping moves storage together with its category, so the accounting stays
  // right without retagging: whichever storage sits in the stash is counted as
  // StashedWeights, and no memory sample shows a blip.
  void swap_with_stash(int version) {
    std::vector<TensorT>& stored = stash_.at(version);
    assert(stored.size() == parameters_.size());
    for (size_t i = 0; i < parameters_.size(); ++i) std::swap(*parameters_[i].value, stored[i]);
  }

  std::vector<ParameterT> parameters_;
  int current_ = 0;
  int in_use_ = -1;                            // version swapped in by use(), or -1
  std::map<int, int> readers_;                 // version -> micro-batches still to read it
  std::map<int, std::vector<TensorT>> stash_;  // older versions, one tensor per parameter
};

// The CPU executor's stash, over core/nn's parameters.
using WeightStash = BasicWeightStash<Parameter>;
extern template class BasicWeightStash<Parameter>;

}  // namespace pipelab
