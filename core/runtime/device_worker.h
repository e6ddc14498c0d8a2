// DeviceWorker: one virtual device of the CPU executor, run by one thread. It
// holds its pipeline stages (one per chunk; its tensor-parallel shard of each)
// with their optimizers and weight versions, and executes its op list of every
// window of the TrainingProgram with real math:
//
//   F          stage input from the data (stage 0) or a receive; keeps the
//              layer inputs; the last stage computes the loss right after F
//              (scale 1 / global batch) and keeps its gradient until B
//   B, BI, BW  on the weight version the micro-batch's F read
//   Recompute  rebuilds what F dropped (plan.recompute drops all but the stage
//              input right after F)
//   U          optimizer step, gradients zeroed
//   Send/Recv  copies through the receiver's mailbox (channel.h)
//   AllReduce  data-parallel: a ring all-reduce of the stage's gradients over
//              the replicas; tensor-parallel: the ring all-reduces happen
//              inside F/B (Sequential calls them), each reported with the
//              identity of the schedule's ALLREDUCE op that names its layer
//   Push/Pull  async data parallelism through the stage's ParameterServer
// Each op is reported as a TraceEvent with its measured begin and end; its
// step is the global step and weight_version the version actually used.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/io/experiment.h"
#include "core/nn/optimizer.h"
#include "core/nn/sequential.h"
#include "core/plan/partition.h"
#include "core/runtime/channel.h"
#include "core/runtime/parameter_server.h"
#include "core/runtime/rendezvous.h"
#include "core/runtime/ring_allreduce.h"
#include "core/runtime/run_clock.h"
#include "core/runtime/run_control.h"
#include "core/runtime/run_recorder.h"
#include "core/runtime/training_data.h"
#include "core/runtime/training_program.h"
#include "core/runtime/weight_stash.h"

namespace pipelab {

// The optimizer an experiment asks for (training.optimizer).
OptimizerSettings optimizer_settings(const OptimizerSpec& spec);

// A point where every worker meets (evaluation after a step): per device, the
// position before which it arrives, and what the last arrival runs.
struct MeetingPoint {
  int step = 0;
  std::vector<int64_t> positions;
};

// What every worker of a run shares. Owned by the executor.
struct WorkerShared {
  const Experiment& experiment;
  const TrainingProgram& program;
  const std::vector<LayerRange>& stage_ranges;      // per pipeline stage
  const std::vector<TensorParallelRole>& tp_roles;  // per model layer
  const RunClock& clock;
  RunControl& control;
  TrainingData& data;
  RunRecorder& recorder;
  std::vector<std::unique_ptr<DeviceAllocator>>& allocators;  // per device
  std::vector<std::unique_ptr<Mailbox>>& mailboxes;           // per device
  // Async data parallelism: one server per (stage, shard), at stage * tp + shard.
  std::vector<std::unique_ptr<ParameterServer>>& servers;
  Rendezvous& rendezvous;
  const std::vector<MeetingPoint>& meeting_points;
  std::function<void(int step)> at_meeting_point;  // run by the last worker to arrive
  std::function<void(const std::string&)> fail;    // ends the run as Failed
};

class DeviceWorker {
 public:
  // Builds the device's stages on its allocator (std::invalid_argument when
  // the model cannot be built).
  DeviceWorker(WorkerShared& shared, int device);
  DeviceWorker(const DeviceWorker&) = delete;
  DeviceWorker& operator=(const DeviceWorker&) = delete;

  // The thread body: every window's ops, then returns. Never throws: errors
  // go to shared.fail, a stop just returns.
  void run();

  int device() const { return device_; }
  int replica() const { return replica_; }
  int shard() const { return shard_; }
  int chunk_count() const { return static_cast<int>(stages_.size()); }
  int stage_index(int chunk) const { return stages_[chunk].stage; }
  Sequential& stage(int chunk) { return *stages_[chunk].layers; }
  const WeightStash& weight_versions(int chunk) const { return *stages_[chunk].versions; }

  // Frees what in-flight micro-batches held (after a stop), so memory returns
  // to weights, gradients and optimizer state.
  void drop_in_flight();

 private:
  struct StageState {
    int stage = 0;
    std::unique_ptr<Sequential> layers;
    std::unique_ptr<Optimizer> optimizer;  // null under async data parallelism
    std::unique_ptr<WeightStash> versions;
    int window_base_version = 0;  // versions at the start of the current window
  };
  // A micro-batch on one of this device's chunks, at a global step.
  struct MicrobatchKey {
    int chunk = 0;
    int step = 0;
    int microbatch = 0;
    auto operator<=>(const MicrobatchKey&) const = default;
  };
  // Where the op being run sits, for the tensor-parallel all-reduces inside it.
  struct CurrentOp {
    const std::vector<Op>* ops = nullptr;
    int index = 0;
    int first_step = 0;
  };

  void run_windows();
  void meet(size_t& next_point, int64_t position);
  void run_op(const TrainingWindow& window, int index);
  void record(const Op& op, double begin, int64_t bytes);

  void forward(Op& op);
  void backward(Op& op);
  void backward_weight(Op& op);
  void recompute(Op& op);
  void update(Op& op, int scheduled_version);
  int64_t send(const Op& op);
  int64_t receive(const Op& op);
  int64_t data_parallel_all_reduce(const Op& op);
  int64_t push(const Op& op);
  int64_t pull(Op& op);
  void tensor_parallel_all_reduce(Tensor& values, int layer);

  // Hands a stage's output to the next stage (F) or its input gradient to the
  // previous one (B/BI): kept for the send, or given directly to the chunk on
  // this device that runs that stage.
  void pass_on(const Op& op, Tensor tensor, bool forward);
  void finish_microbatch(const MicrobatchKey& key, StageState& stage);
  Tensor take(std::map<MicrobatchKey, Tensor>& from, const MicrobatchKey& key, const char* what);
  MicrobatchKey key_of(const Op& op) const { return {op.chunk, op.step, op.microbatch}; }
  DeviceAllocator& allocator() { return *shared_.allocators[device_]; }

  WorkerShared& shared_;
  const int device_;
  int replica_ = 0;
  int rank_ = 0;
  int shard_ = 0;
  int last_stage_ = 0;
  std::vector<StageState> stages_;  // by chunk
  RingGroup tensor_parallel_group_;
  RingGroup data_parallel_group_;
  int64_t tensor_parallel_collectives_ = 0;
  int64_t data_parallel_collectives_ = 0;

  CurrentOp current_;
  std::vector<char> tensor_parallel_reported_;  // per op of the current window

  // In-flight micro-batches.
  std::map<MicrobatchKey, StageActivations> saved_;
  std::map<MicrobatchKey, int> forward_version_;
  std::map<MicrobatchKey, Tensor> inputs_;        // received (or handed over) stage inputs
  std::map<MicrobatchKey, Tensor> output_grads_;  // received gradients, or the loss's
  std::map<MicrobatchKey, Tensor> outgoing_activations_;
  std::map<MicrobatchKey, Tensor> outgoing_gradients_;
};

}  // namespace pipelab
