// CpuBackend: what the executor loop (device_worker.h) runs one CPU virtual
// device's ops on. Its math is core/nn's (host tensors, BLAS); its timing the
// run's steady clock around each op; its transfers copies into the
// receiver's mailbox (channel.h) through the run's transport (transport.h);
// its collectives ring all-reduces over the same transport
// (ring_allreduce.h). A stage's host view is the stage itself.
//
// CpuDevices is what every CPU device of a run shares: one counting allocator
// and one mailbox per virtual device this process runs, and the transport
// that reaches any device's mailbox.
#pragma once

#include <cstdint>
#include <functional>
#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/nn/device_allocator.h"
#include "core/nn/embedding.h"
#include "core/nn/optimizer.h"
#include "core/nn/sequential.h"
#include "core/comm/channel.h"
#include "core/runtime/device_worker.h"
#include "core/comm/message_tag.h"
#include "core/comm/ring_allreduce.h"
#include "core/comm/transport.h"

namespace pipelab {

struct CpuDevices {
  // Per device; null for the devices other processes run.
  std::vector<std::unique_ptr<DeviceAllocator>> allocators;
  std::vector<std::unique_ptr<Mailbox>> mailboxes;
  std::unique_ptr<InProcessTransport> in_process;  // set by connect()
  std::unique_ptr<Transport> across_processes;     // null in a one-process run

  // Makes the transport once the mailboxes are in; a multi-process run's
  // `wrap` (ProcessShare::make_transport) wraps the in-process one.
  void connect(const std::function<std::unique_ptr<Transport>(InProcessTransport&)>& wrap = {});
  Transport& transport() { return across_processes ? *across_processes : *in_process; }
  Mailbox& host_mailbox(int device) { return *mailboxes[static_cast<size_t>(device)]; }
  const std::vector<std::unique_ptr<Mailbox>>& host_mailboxes() const { return mailboxes; }
  // Where requests for this process's parameter servers go (transport.h).
  void set_server_inbox(InProcessTransport::ServerInbox inbox) {
    in_process->set_server_inbox(std::move(inbox));
  }
  // Frees every message nobody received (after a stop).
  void release_in_flight();
};

class CpuBackend {
 public:
  using Devices = CpuDevices;
  using Stack = Sequential;
  using Optimizer = pipelab::Optimizer;

  CpuBackend(CpuDevices& devices, WorkerShared& shared, const WorkerPlace& place);

  std::unique_ptr<Sequential> make_stack(const LayerRange& range,
                                         TensorParallelSetup tensor_parallel,
                                         const Sequential::BuiltLayer& built = {});
  std::unique_ptr<Optimizer> make_optimizer(const OptimizerSettings& settings,
                                            std::vector<Parameter> parameters);

  // The worker's thread: nothing to set up; errors read "device N: ...".
  void enter_thread() {}
  void leave_thread() {}
  std::string failure_message(const std::exception& error) const;

  // Timing: an op's measured begin (now) and end (now), reported at once.
  // Ops may nest (a tensor-parallel all-reduce inside a forward).
  void begin(const Op& op);
  void end(const Op& op, int64_t bytes);
  void op_done(const Op&) {}
  void report_all() {}  // everything is reported as it happens

  Tensor stage_input(const Op& op);
  // The loss of the last stage's output (reported by shard 0); returns its
  // gradient. When the output layer is column-parallel over the vocabulary,
  // the shards compute it together (vocab_parallel_loss.h).
  // `tensor_parallel_sum` runs the vocabulary-parallel loss's all-reduces
  // (the worker times them as the schedule's ops).
  Tensor loss_gradient(const Op& op, const Tensor& output,
                       const std::function<void(Tensor&)>& tensor_parallel_sum);
  // Posts a copy of `message` to the receiver's mailbox; timed.
  int64_t send(const Op& op, const MessageTag& tag, Tensor message);
  // Waits for the message; timed.
  Tensor receive(const Op& op, const MessageTag& tag);

  // The parameters' gradients in one [1, count] buffer (Workspace), zeros
  // after them up to `padded_count` when that is larger; and back.
  Tensor gather_gradients(const std::vector<Parameter>& parameters, int64_t padded_count = 0);
  void scatter_gradients(const Tensor& flat, const std::vector<Parameter>& parameters);
  // ZeRO's pieces (device_worker.h): a zeroed tensor, and `count` values
  // copied or added from one tensor's offset to another's.
  Tensor zeros(int64_t rows, int64_t cols, MemoryCategory category);
  void renew(Tensor& released, int64_t rows, int64_t cols, MemoryCategory category) {
    released = zeros(rows, cols, category);
  }
  void copy_values(const Tensor& from, int64_t from_offset, Tensor& to, int64_t to_offset, int64_t count);
  void add_values(const Tensor& from, int64_t from_offset, Tensor& to, int64_t to_offset, int64_t count);
  // ZeRO's collectives over the data-parallel group (`experts`: over the
  // replicas holding the same experts), in place on a buffer the group cuts
  // into equal slices, member r's being slice r (ring_allreduce.h).
  void data_parallel_reduce_scatter(Tensor& flat, bool experts);
  void data_parallel_all_gather(Tensor& flat, bool experts);
  void data_parallel_all_reduce(Tensor& flat);
  void data_parallel_all_reduce(std::vector<float>& values);  // host values (batch statistics)
  void tensor_parallel_all_reduce(Tensor& values);
  // Expert parallelism: a moe layer's all-to-all over this replica's
  // expert-parallel group, and the sum of the experts' gradients over the
  // replicas holding the same experts (every ep-th replica).
  void expert_all_to_all(Tensor& values);
  void expert_data_parallel_all_reduce(Tensor& flat);
  // Sequence parallelism's collectives over the tensor-parallel group, in
  // place (ring_allreduce.h).
  void tensor_parallel_reduce_scatter(Tensor& values);
  void tensor_parallel_all_gather(Tensor& values);
  // Context parallelism's collectives over the context-parallel group (the
  // ranks splitting this replica's sequences), in place (ring_allreduce.h).
  void context_parallel_reduce_scatter(Tensor& values);
  // Hands each rank's slice to `arrived` as the ring brings it (may be empty).
  void context_parallel_all_gather(Tensor& values, const SliceArrival& arrived);

  // Offloading: the tensor's values move to fresh storage counted as Host
  // (offload) or Activations again (reload), on the device's allocator: a
  // real copy, so its time shows; host and device are the same RAM here.
  // Each returns the bytes it moved.
  int64_t offload_tensor(Tensor& tensor) { return move_to(tensor, MemoryCategory::Host); }
  int64_t reload_tensor(Tensor& tensor) { return move_to(tensor, MemoryCategory::Activations); }

  // ZeRO-Offload's host slices (device_worker.h): tensors counted as Host on
  // the device's ledger, and a device tensor's values copied to one and back
  // (same shape).
  DeviceAllocator* host_allocator() { return &allocator(); }
  void download(const Tensor& from, Tensor& to) { to.copy_from(from); }
  void upload(const Tensor& from, Tensor& to) { to.copy_from(from); }

  // The host view of a stage is the stage: nothing to copy.
  Sequential& host_stage(Sequential& stage, int) { return stage; }
  void copy_to_host(Sequential&, int, ParameterPart) {}
  void copy_values_to_device(Sequential&, int) {}
  void drop_in_flight() {}

 private:
  DeviceAllocator& allocator() { return *devices_.allocators[place_.device]; }
  static int64_t move_to(Tensor& tensor, MemoryCategory category) {
    if (tensor.empty()) return 0;
    tensor = tensor.clone(category);
    return tensor.bytes();
  }

  CpuDevices& devices_;
  WorkerShared& shared_;
  const WorkerPlace place_;
  RingGroup tensor_parallel_group_;
  RingGroup data_parallel_group_;
  RingGroup expert_parallel_group_;
  RingGroup expert_data_parallel_group_;
  RingGroup context_parallel_group_;
  int64_t tensor_parallel_collectives_ = 0;
  int64_t data_parallel_collectives_ = 0;
  int64_t expert_parallel_collectives_ = 0;
  int64_t expert_data_parallel_collectives_ = 0;
  int64_t context_parallel_collectives_ = 0;
  std::vector<double> open_begins_;  // begin times of the ops begun, not ended (innermost last)
};

}  // namespace pipelab
