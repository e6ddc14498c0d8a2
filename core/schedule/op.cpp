#include "core/schedule/op.h"

namespace pipelab {

const char* comm_group_name(CommGroup group) {
  switch (group) {
    case CommGroup::None:
      return "none";
    case CommGroup::TensorParallel:
      return "tensor_parallel";
    case CommGroup::DataParallel:
      return "data_parallel";
    case CommGroup::ExpertParallel:
      return "expert_parallel";
    case CommGroup::ContextParallel:
      return "context_parallel";
  }
  return "none";
}

std::optional<CommGroup> parse_comm_group(const std::string& name) {
  for (CommGroup group : {CommGroup::None, CommGroup::TensorParallel, CommGroup::DataParallel,
                          CommGroup::ExpertParallel, CommGroup::ContextParallel})
    if (name == comm_group_name(group)) return group;
  return std::nullopt;
}

std::string op_label(const Op& op) {
  std::string label = op_kind_name(op.kind);
  if (op.microbatch >= 0) label += std::to_string(op.microbatch);
  label += " s" + std::to_string(op.stage);
  // Updates and pulls are identified by the version they produce; everything
  // else by its step (shown only past the first, to keep grids short).
  const bool names_version = op_kind_facts(op.kind).writes_weights;
  if (names_version) label += " v" + std::to_string(op.weight_version);
  if (op_kind_facts(op.kind).family == OpFamily::Collective) {
    if (op.group == CommGroup::TensorParallel) label += " tp";
    if (op.group == CommGroup::DataParallel) label += " dp";
    if (op.group == CommGroup::ExpertParallel) label += " ep";
    if (op.group == CommGroup::ContextParallel) label += " cp";
  }
  if (op.layer >= 0) label += " L" + std::to_string(op.layer);
  if (op.peer >= 0) label += (is_send(op.kind) ? " to d" : " from d") + std::to_string(op.peer);
  if (!names_version && op.step > 0) label += " t" + std::to_string(op.step);
  return label;
}

}  // namespace pipelab
