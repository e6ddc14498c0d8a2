#include "core/runtime/weight_stash.h"

#include <cassert>
#include <utility>

namespace pipelab {

WeightStash::WeightStash(std::vector<Parameter> parameters, int version)
    : parameters_(std::move(parameters)), current_(version) {}

int WeightStash::note_forward() {
  ++readers_[current_];
  return current_;
}

// Swapping moves storage together with its category, so the accounting stays
// right without retagging: whichever storage sits in the stash is counted as
// StashedWeights, and no memory sample shows a blip.
void WeightStash::swap_with_stash(int version) {
  std::vector<Tensor>& stored = stash_.at(version);
  assert(stored.size() == parameters_.size());
  for (size_t i = 0; i < parameters_.size(); ++i) std::swap(*parameters_[i].value, stored[i]);
}

void WeightStash::use(int version) {
  assert(in_use_ < 0);
  if (version == current_) return;
  swap_with_stash(version);
  in_use_ = version;
}

void WeightStash::restore_current() {
  if (in_use_ < 0) return;
  swap_with_stash(in_use_);
  in_use_ = -1;
}

void WeightStash::release(int version) {
  auto readers = readers_.find(version);
  assert(readers != readers_.end() && readers->second > 0);
  if (--readers->second > 0) return;
  readers_.erase(readers);
  stash_.erase(version);  // frees the copy (nothing when it is the current version)
}

void WeightStash::before_update() {
  assert(in_use_ < 0);
  auto readers = readers_.find(current_);
  if (readers == readers_.end() || readers->second == 0) return;
  std::vector<Tensor> copy;
  copy.reserve(parameters_.size());
  for (const Parameter& parameter : parameters_)
    copy.push_back(parameter.value->clone(MemoryCategory::StashedWeights));
  stash_[current_] = std::move(copy);
}

void WeightStash::after_update(int new_version) { current_ = new_version; }

int64_t WeightStash::stashed_bytes() const {
  int64_t bytes = 0;
  for (const auto& [version, tensors] : stash_)
    for (const Tensor& tensor : tensors) bytes += tensor.bytes();
  return bytes;
}

void WeightStash::clear() {
  restore_current();
  stash_.clear();
  readers_.clear();
}

}  // namespace pipelab
