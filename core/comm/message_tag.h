// MessageTag: what identifies a message between virtual devices at its
// receiver (both executors match messages by tag, see tagged_mailbox.h).
#pragma once

#include <compare>
#include <cstdint>

#include "core/schedule/op.h"

namespace pipelab {

enum class MessageKind {
  Activation,           // a stage's output, to the next stage
  Gradient,             // a stage's input gradient, to the previous stage
  TensorParallelChunk,  // one ring step of a tensor-parallel all-reduce
  DataParallelChunk,    // one ring step of a data-parallel all-reduce
  EvaluationWeights,    // a run over processes: a replica-0 stage's weights, to rank 0 to evaluate
  ExpertParallelChunk,  // one chunk of a moe layer's all-to-all
  ExpertDataParallelChunk,  // one ring step of the all-reduce of experts' gradients
  ContextParallelChunk,     // one ring step of a context-parallel all-gather or reduce-scatter
  // Async data parallelism over processes (remote_parameter_server.h), between a
  // replica and the rank holding its stage shard's parameter server:
  ParameterServerPush,     // the replica's gradients of a step, to the server
  ParameterServerPull,     // the replica asks for a weight version (no values)
  ParameterServerWeights,  // that version, back to the replica
};

// The kinds a parameter server, not a device's mailbox, takes in.
inline bool is_parameter_server_request(MessageKind kind) {
  return kind == MessageKind::ParameterServerPush || kind == MessageKind::ParameterServerPull;
}

// Fields a kind does not use stay 0.
struct MessageTag {
  MessageKind kind = MessageKind::Activation;
  int sender = 0;          // device
  int stage = 0;           // activations, gradients, evaluation weights, servers: the stage
  int step = 0;            // activations, gradients, evaluation weights, pushes: the global step
  int microbatch = 0;      // activations and gradients
  int64_t collective = 0;  // ring chunks: which collective of the sender's group
  int ring_step = 0;       // ring chunks: 0 .. 2(n-1)-1
  int version = 0;         // parameter-server pulls and their weights: the weight version

  auto operator<=>(const MessageTag&) const = default;

  static MessageTag activation(int sender, int stage, int step, int microbatch);
  static MessageTag gradient(int sender, int stage, int step, int microbatch);
  static MessageTag ring_chunk(MessageKind kind, int sender, int64_t collective, int ring_step);
  static MessageTag evaluation_weights(int sender, int stage, int step);
  static MessageTag server_push(int sender, int stage, int step);
  static MessageTag server_pull(int sender, int stage, int version);
  static MessageTag server_weights(int sender, int stage, int version);
};

// The tag of the message a pipeline Send op sends or a Recv op receives: one
// place for how the two ends name the same activation or gradient (the
// receiver names the sender's stage, one before it for an activation, one
// after it for a gradient).
MessageTag message_tag(const Op& op);

}  // namespace pipelab
