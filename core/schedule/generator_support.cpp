#include "core/schedule/generator_support.h"

#include <cassert>

namespace pipelab {

Schedule make_compute_schedule(ScheduleKind kind, int pp, int microbatches, int chunks, int steps) {
  Schedule schedule;
  schedule.kind = kind;
  schedule.pp = pp;
  schedule.chunks = chunks;
  schedule.microbatches = microbatches;
  schedule.steps = steps;
  schedule.devices.resize(pp);
  return schedule;
}

Op make_compute_op(OpKind kind, int device, int stage, int chunk, int microbatch, int step,
                   int weight_version) {
  Op op;
  op.kind = kind;
  op.device = device;
  op.stage = stage;
  op.chunk = chunk;
  op.microbatch = microbatch;
  op.step = step;
  op.weight_version = weight_version;
  return op;
}

std::vector<PassSlot> one_f_one_b_order(int warmup, int count) {
  assert(warmup >= 0 && warmup <= count);
  std::vector<PassSlot> order;
  order.reserve(2 * static_cast<size_t>(count));
  for (int i = 0; i < warmup; ++i) order.push_back({true, i});
  for (int i = 0; i < count - warmup; ++i) {
    order.push_back({true, warmup + i});
    order.push_back({false, i});
  }
  for (int i = count - warmup; i < count; ++i) order.push_back({false, i});
  return order;
}

}  // namespace pipelab
