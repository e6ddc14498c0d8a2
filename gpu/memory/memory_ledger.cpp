#include "gpu/memory/memory_ledger.h"

#include <cassert>

namespace pipelab::gpu {

void MemoryLedger::add(MemoryCategory category, int64_t bytes) {
  assert(bytes >= 0);
  if (bytes == 0) return;
  change(category, bytes);
  notify();
}

void MemoryLedger::remove(MemoryCategory category, int64_t bytes) {
  assert(bytes >= 0 && current(category) >= bytes && "released more than was allocated");
  if (bytes == 0) return;
  change(category, -bytes);
  notify();
}

void MemoryLedger::retag(int64_t bytes, MemoryCategory from, MemoryCategory to) {
  if (bytes == 0 || from == to) return;
  assert(current(from) >= bytes && "retagged more than the category holds");
  change(from, -bytes);
  change(to, bytes);
  notify();
}

void MemoryLedger::reset_peak() {
  peak_by_category_ = current_;
  peak_total_ = current_total_;
}

void MemoryLedger::change(MemoryCategory category, int64_t delta) {
  const int i = static_cast<int>(category);
  current_[i] += delta;
  if (is_on_device(category)) current_total_ += delta;
  if (current_[i] > peak_by_category_[i]) peak_by_category_[i] = current_[i];
  if (current_total_ > peak_total_) peak_total_ = current_total_;
}

void MemoryLedger::notify() const {
  if (listener_) listener_(current_);
}

}  // namespace pipelab::gpu
