#include "core/comm/message_tag.h"

#include <stdexcept>
#include <string>

namespace pipelab {

MessageTag MessageTag::activation(int sender, int stage, int step, int microbatch) {
  MessageTag tag;
  tag.kind = MessageKind::Activation;
  tag.sender = sender;
  tag.stage = stage;
  tag.step = step;
  tag.microbatch = microbatch;
  return tag;
}

MessageTag MessageTag::gradient(int sender, int stage, int step, int microbatch) {
  MessageTag tag = activation(sender, stage, step, microbatch);
  tag.kind = MessageKind::Gradient;
  return tag;
}

MessageTag MessageTag::ring_chunk(MessageKind kind, int sender, int64_t collective, int ring_step) {
  MessageTag tag;
  tag.kind = kind;
  tag.sender = sender;
  tag.collective = collective;
  tag.ring_step = ring_step;
  return tag;
}

MessageTag MessageTag::evaluation_weights(int sender, int stage, int step) {
  MessageTag tag;
  tag.kind = MessageKind::EvaluationWeights;
  tag.sender = sender;
  tag.stage = stage;
  tag.step = step;
  return tag;
}

MessageTag MessageTag::server_push(int sender, int stage, int step) {
  MessageTag tag = evaluation_weights(sender, stage, step);  // the same fields
  tag.kind = MessageKind::ParameterServerPush;
  return tag;
}

MessageTag MessageTag::server_pull(int sender, int stage, int version) {
  return {.kind = MessageKind::ParameterServerPull,
          .sender = sender,
          .stage = stage,
          .version = version};
}

MessageTag MessageTag::server_weights(int sender, int stage, int version) {
  MessageTag tag = server_pull(sender, stage, version);
  tag.kind = MessageKind::ParameterServerWeights;
  return tag;
}

MessageTag message_tag(const Op& op) {
  switch (op.kind) {
    case OpKind::SendActivation:
      return MessageTag::activation(op.device, op.stage, op.step, op.microbatch);
    case OpKind::SendGradient:
      return MessageTag::gradient(op.device, op.stage, op.step, op.microbatch);
    case OpKind::RecvActivation:
      return MessageTag::activation(op.peer, op.stage - 1, op.step, op.microbatch);
    case OpKind::RecvGradient:
      return MessageTag::gradient(op.peer, op.stage + 1, op.step, op.microbatch);
    default:
      throw std::invalid_argument("message_tag: " + op_label(op) + " is not a Send or Recv op");
  }
}

}  // namespace pipelab
