#include "core/schedule/op_kind.h"

#include "core/plan/stage_profile.h"

namespace pipelab {

std::optional<OpKind> parse_op_kind(const std::string& name) {
  for (const OpKindFacts& facts : kOpKindTable)
    if (name == facts.name) return facts.kind;
  return std::nullopt;
}

double stage_flops(OpKind kind, const StageProfile& stage) {
  const StageWork& work = op_kind_facts(kind).work;
  double flops = 0;
  if (work.forward) flops += stage.forward_flops;
  if (work.backward_input) flops += stage.backward_input_flops;
  if (work.backward_weight) flops += stage.backward_weight_flops;
  return flops;
}

double stage_memory_bytes(OpKind kind, const StageProfile& stage) {
  const StageWork& work = op_kind_facts(kind).work;
  double bytes = 0;
  if (work.forward) bytes += stage.forward_memory_bytes;
  if (work.backward_input) bytes += stage.backward_memory_bytes;
  return bytes;
}

}  // namespace pipelab
