#include "core/runtime/pipemare_weights.h"

#include <algorithm>
#include <cassert>
#include <cmath>

namespace pipelab {

double pipemare_learning_rate(double lr, int delay, int64_t updates_done, int warmup_updates) {
  assert(warmup_updates >= 1);
  const double progress = std::min(static_cast<double>(updates_done) / warmup_updates, 1.0);
  const double exponent = 1.0 - progress;
  return lr / std::pow(static_cast<double>(std::max(delay, 1)), exponent);
}

}  // namespace pipelab
