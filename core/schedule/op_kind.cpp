#include "core/schedule/op_kind.h"

#include "core/plan/stage_profile.h"

namespace pipelab {

std::optional<OpKind> parse_op_kind(const std::string& name) {
  for (const OpKindFacts& facts : kOpKindTable)
    if (name == facts.name) return facts.kind;
  return std::nullopt;
}

namespace {

// A stage's value for the parts of its work an op of `kind` does, summed.
template <typename T>
T sum_over_work(OpKind kind, T forward, T backward_input, T backward_weight) {
  const StageWork& work = op_kind_facts(kind).work;
  T sum = 0;
  if (work.forward) sum += forward;
  if (work.backward_input) sum += backward_input;
  if (work.backward_weight) sum += backward_weight;
  return sum;
}

}  // namespace

double stage_flops(OpKind kind, const StageProfile& stage) {
  return sum_over_work(kind, stage.forward_flops, stage.backward_input_flops, stage.backward_weight_flops);
}

int64_t stage_kernels(OpKind kind, const StageProfile& stage) {
  return sum_over_work(kind, stage.forward_kernels, stage.backward_input_kernels, stage.backward_weight_kernels);
}

double stage_memory_bytes(OpKind kind, const StageProfile& stage) {
  // The weight gradient's GEMMs move no memory-bound bytes of their own.
  return sum_over_work(kind, stage.forward_memory_bytes, stage.backward_memory_bytes, 0.0);
}

}  // namespace pipelab
