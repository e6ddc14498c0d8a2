#include "core/schedule/op.h"

#include <array>
#include <cassert>

namespace pipelab {
namespace {

struct OpKindEntry {
  OpKind kind;
  const char* name;
};

// One row per OpKind, in enum order.
constexpr std::array<OpKindEntry, 15> kOpKinds = {{
    {OpKind::Forward, "F"},
    {OpKind::Backward, "B"},
    {OpKind::BackwardInput, "BI"},
    {OpKind::BackwardWeight, "BW"},
    {OpKind::Update, "U"},
    {OpKind::SendActivation, "SEND_ACT"},
    {OpKind::RecvActivation, "RECV_ACT"},
    {OpKind::SendGradient, "SEND_GRAD"},
    {OpKind::RecvGradient, "RECV_GRAD"},
    {OpKind::AllReduce, "ALLREDUCE"},
    {OpKind::Recompute, "RECOMPUTE"},
    {OpKind::Offload, "OFFLOAD"},
    {OpKind::Reload, "RELOAD"},
    {OpKind::PushGradient, "PUSH_GRAD"},
    {OpKind::PullWeights, "PULL_WEIGHTS"},
}};

}  // namespace

const char* op_kind_name(OpKind kind) {
  const auto index = static_cast<size_t>(kind);
  assert(index < kOpKinds.size() && kOpKinds[index].kind == kind);
  return kOpKinds[index].name;
}

std::optional<OpKind> parse_op_kind(const std::string& name) {
  for (const auto& entry : kOpKinds)
    if (name == entry.name) return entry.kind;
  return std::nullopt;
}

bool is_compute(OpKind kind) {
  switch (kind) {
    case OpKind::Forward:
    case OpKind::Backward:
    case OpKind::BackwardInput:
    case OpKind::BackwardWeight:
    case OpKind::Update:
    case OpKind::Recompute:
      return true;
    default:
      return false;
  }
}

bool is_communication(OpKind kind) { return !is_compute(kind); }

std::string op_label(const Op& op) {
  std::string label = op_kind_name(op.kind);
  if (op.microbatch >= 0) label += std::to_string(op.microbatch);
  label += " s" + std::to_string(op.stage);
  // Updates and pulls are identified by the version they produce; everything
  // else by its step (shown only past the first, to keep grids short).
  const bool names_version = op.kind == OpKind::Update || op.kind == OpKind::PullWeights;
  if (names_version) label += " v" + std::to_string(op.weight_version);
  if (op.kind == OpKind::AllReduce) {
    if (op.group == CommGroup::TensorParallel) label += " tp";
    if (op.group == CommGroup::DataParallel) label += " dp";
  }
  if (op.layer >= 0) label += " L" + std::to_string(op.layer);
  if (op.peer >= 0) {
    const bool sends = op.kind == OpKind::SendActivation || op.kind == OpKind::SendGradient;
    label += (sends ? " to d" : " from d") + std::to_string(op.peer);
  }
  if (!names_version && op.step > 0) label += " t" + std::to_string(op.step);
  return label;
}

}  // namespace pipelab
