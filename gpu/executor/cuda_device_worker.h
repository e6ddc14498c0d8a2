// CudaDeviceWorker: one virtual device of the CUDA executor, run by one host
// thread that queues its work on the device's streams. The twin of core/
// runtime's DeviceWorker: the same op list of every window of the
// TrainingProgram, the same meaning for every op, the same events, with the
// math on the GPU (GpuSequential, GpuOptimizer, gpu losses):
//
//   F          stage input uploaded from the data (stage 0) or received;
//              keeps the layer inputs; the last stage computes the loss right
//              after F (scale 1 / global batch) and keeps its gradient until B
//   B, BI, BW  on the weight version the micro-batch's F read
//   Recompute  rebuilds what F dropped (plan.recompute)
//   U          optimizer step, gradients zeroed
//   Send       the message goes to the receiver on the comm stream
//              (message_routes.h), timed there
//   Recv       the compute stream waits for the message's arrival, timed there
//   AllReduce  data-parallel: the stage's gradients, flattened, summed over
//              the replicas (device_all_reduce.h); tensor-parallel: inside F/B
//              (GpuSequential calls them), each reported with the identity of
//              the schedule's ALLREDUCE op that names its layer
//   Push/Pull  async data parallelism through the stage's (host)
//              ParameterServer, via a HostStageMirror
//   Offload/Reload  activations stay on the device (reported, zero length)
//
// Each op is timed by a CUDA event pair on the stream that runs it (OpTimings)
// and reported once the GPU has run it; a device's ops of a step, and its
// losses, are all reported before it tells the recorder it finished the step.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/io/experiment.h"
#include "core/plan/partition.h"
#include "core/runtime/device_worker.h"
#include "core/runtime/parameter_server.h"
#include "core/runtime/rendezvous.h"
#include "core/runtime/run_clock.h"
#include "core/runtime/run_control.h"
#include "core/runtime/run_recorder.h"
#include "core/runtime/training_data.h"
#include "core/runtime/training_program.h"
#include "core/runtime/weight_stash.h"
#include "gpu/comm/device_all_reduce.h"
#include "gpu/layers/loss.h"
#include "gpu/layers/optimizer.h"
#include "gpu/layers/sequential.h"
#include "gpu/executor/host_stage_mirror.h"
#include "gpu/comm/message_routes.h"
#include "gpu/executor/op_timings.h"
#include "gpu/memory/pinned_staging.h"
#include "gpu/executor/virtual_device.h"

namespace pipelab::gpu {

using GpuWeightStash = BasicWeightStash<GpuParameter>;

// What every worker of a CUDA run shares. Owned by the executor.
struct CudaWorkerShared {
  const Experiment& experiment;
  const TrainingProgram& program;
  const std::vector<LayerRange>& stage_ranges;      // per pipeline stage
  const std::vector<TensorParallelRole>& tp_roles;  // per model layer
  const RunClock& clock;
  RunControl& control;
  TrainingData& data;
  RunRecorder& recorder;
  std::vector<std::unique_ptr<VirtualDevice>>& devices;  // per virtual device
  const MessageRoutes& routes;
  // Per virtual device: its data-parallel and tensor-parallel groups (null
  // when the group has one member).
  std::vector<DeviceAllReduce*> data_parallel_groups;
  std::vector<DeviceAllReduce*> tensor_parallel_groups;
  // Async data parallelism: one server per (stage, shard), at stage * tp + shard.
  std::vector<std::unique_ptr<ParameterServer>>& servers;
  Rendezvous& rendezvous;
  const std::vector<MeetingPoint>& meeting_points;
  std::function<void(int step)> at_meeting_point;  // run by the last worker to arrive
  std::function<void(const std::string&)> fail;    // ends the run as Failed
};

class CudaDeviceWorker {
 public:
  // Builds the device's stages on its GPU (std::invalid_argument when the
  // model cannot be built, GpuOutOfMemory when it does not fit).
  CudaDeviceWorker(CudaWorkerShared& shared, int device);
  ~CudaDeviceWorker();
  CudaDeviceWorker(const CudaDeviceWorker&) = delete;
  CudaDeviceWorker& operator=(const CudaDeviceWorker&) = delete;

  // The thread body: every window's ops, then returns. Never throws: errors
  // go to shared.fail, a stop just returns.
  void run();

  int device() const { return device_; }
  int replica() const { return replica_; }
  int shard() const { return shard_; }
  int chunk_count() const { return static_cast<int>(stages_.size()); }
  int stage_index(int chunk) const { return stages_[chunk].stage; }
  GpuSequential& stage(int chunk) { return *stages_[chunk].layers; }
  // A host copy of chunk `chunk`'s stage, made on first use (evaluation,
  // parameter servers).
  HostStageMirror& host_mirror(int chunk);

  // Frees what in-flight micro-batches held (after a stop or at the end), so
  // memory returns to weights, gradients, optimizer state and workspace.
  void drop_in_flight();

 private:
  struct StageState {
    int stage = 0;
    std::unique_ptr<GpuSequential> layers;
    std::unique_ptr<GpuOptimizer> optimizer;  // null under async data parallelism
    std::unique_ptr<GpuWeightStash> versions;
    std::unique_ptr<HostStageMirror> mirror;  // made on first use
    int window_base_version = 0;
  };
  struct MicrobatchKey {
    int chunk = 0;
    int step = 0;
    int microbatch = 0;
    auto operator<=>(const MicrobatchKey&) const = default;
  };
  struct CurrentOp {
    const std::vector<Op>* ops = nullptr;
    int index = 0;
    int first_step = 0;
  };
  // A loss whose sums the GPU is still computing.
  struct PendingLoss {
    int step = 0;
    int microbatch = 0;
    GpuLossResult loss;     // row losses (and, for cross-entropy, hits)
    GpuLossResult correct;  // mse on a classification set: hits from the arg-max
  };

  void run_windows();
  void meet(size_t& next_point, int64_t position);
  void run_op(const TrainingWindow& window, int index);
  // Reports this device's queued ops and losses, then that it finished `step`.
  void finish_step(int step);

  void forward(Op& op);
  void compute_loss(const Op& op, const DeviceTensor& output);
  void backward(Op& op);
  void backward_weight(Op& op);
  void recompute(Op& op);
  void update(Op& op, int scheduled_version);
  int64_t send(const Op& op);
  int64_t receive(const Op& op);
  int64_t data_parallel_all_reduce(const Op& op);
  int64_t push(const Op& op);
  int64_t pull(Op& op);
  void tensor_parallel_all_reduce(DeviceTensor& values, int layer);

  void pass_on(const Op& op, DeviceTensor tensor, bool forward);
  void finish_microbatch(const MicrobatchKey& key, StageState& stage);
  DeviceTensor take(std::map<MicrobatchKey, DeviceTensor>& from, const MicrobatchKey& key,
                    const char* what);
  MicrobatchKey key_of(const Op& op) const { return {op.chunk, op.step, op.microbatch}; }
  VirtualDevice& self() { return *shared_.devices[device_]; }
  CachingAllocator& allocator() { return self().allocator(); }
  cudaStream_t compute() { return self().compute_stream(); }

  CudaWorkerShared& shared_;
  const int device_;
  int replica_ = 0;
  int rank_ = 0;
  int shard_ = 0;
  int last_stage_ = 0;
  std::vector<StageState> stages_;          // by chunk
  std::unique_ptr<OpTimings> timings_;      // made on the worker's thread, in run()
  std::unique_ptr<PinnedStaging> staging_;  // stage 0's input uploads

  CurrentOp current_;
  std::vector<char> tensor_parallel_reported_;

  std::map<MicrobatchKey, GpuStageActivations> saved_;
  std::map<MicrobatchKey, int> forward_version_;
  std::map<MicrobatchKey, DeviceTensor> inputs_;
  std::map<MicrobatchKey, DeviceTensor> output_grads_;
  std::map<MicrobatchKey, DeviceTensor> outgoing_activations_;
  std::map<MicrobatchKey, DeviceTensor> outgoing_gradients_;
  std::vector<PendingLoss> pending_losses_;
};

}  // namespace pipelab::gpu
