// DeviceWorker: one virtual device of a run, driven by one host thread: the
// one executor loop of PipeLab, written once for every backend, in the way
// DeepSpeed's pipe engine maps instructions to methods. It walks the device's
// op list of every window of the TrainingProgram and gives each op its meaning:
//
//   F          stage input from the data (stage 0) or a receive; keeps the
//              layer inputs; the last stage computes the loss right after F
//              (scale 1 / global batch) and keeps its gradient until B
//   B, BI, BW  on the weight version the micro-batch's F read (stashed if
//              updated since), or under pipemare on the stage's current
//              weights, extrapolated back by its velocity when
//              training.pipemare.discrepancy_correction is on
//   Recompute  rebuilds what F dropped (plan.recompute drops all but the stage
//              input right after F)
//   U          optimizer step, gradients zeroed (pipemare: step size over the
//              delay, velocity updated; pipemare_weights.h)
//   Send/Recv  through the backend's transfers
//   AllReduce  data-parallel: the stage's gradients, flattened, summed over
//              the replicas; tensor-parallel: inside F/B (the stage stack calls
//              them), each reported with the identity of the schedule's
//              ALLREDUCE op that names its layer
//   ZeRO       (parallel.zero 1 or 2, dp > 1; lowering.h) the replicas share
//              out the stage's optimizer state: each holds it, and the summed
//              gradients, for its slice of the flattened parameters only
//              (ZeroShard). A data-parallel ReduceScatter sums every
//              replica's gradients into the slices; U steps the slice (its
//              weights copied out for the optimizer); the AllGather after U
//              hands every replica the updated slices. Zero 2 scatters after
//              every backward and keeps no whole gradients between them: the
//              layers' gradients are released after each scatter and renewed
//              (zeros, counted as the scatter's buffer, CommBuffers) before
//              the next backward. Experts share over the replicas holding the
//              same experts, the rest over all dp.
//              Zero 3 shards the weights too, one unit per layer with weights
//              (FSDP's wrapping of each block): each replica keeps its slice
//              of every layer's flattened weights (Weights) and gathers a
//              layer's whole weights (CommBuffers) right before the layer's
//              forward, backward or weight gradient (and, in an F or B, the
//              next layer's: FSDP's prefetch), freeing them right after
//              (FSDP's reshard after forward); in a B or BW the layer's whole
//              gradients exist from its backward to their reduce-scatter into
//              the slice, right after it. The schedule's AllGather before each
//              F, B and BI and ReduceScatter after each B and BW are reported
//              by that op, spanning its layers' collectives; U steps the
//              slices, which are the master weights. At evaluations and after
//              the last step every weight is gathered whole.
//   Push/Pull  async data parallelism through the stage's ParameterServer
//              (or, over processes, the rank that holds it), on a host view
//              of the stage's weights
//   Offload    moves a micro-batch's saved activations (layer states
//              included) to host memory through the backend; Reload brings
//              them back. Copies, so the backward reads the same bits.
//              Optimizer offloading: a step's Offload copies the gradients
//              to the stage's host view, U steps a host optimizer there (its
//              state counted as Host) and Reload copies the weights back.
//              With ZeRO (ZeRO-Offload) only the slice goes: Offload copies
//              its summed gradients to the host, U steps the slice's host
//              master weights there, Reload brings them back for the
//              AllGather.
//
// Everything about weight versions (stashing, 2BW, PipeMare), micro-batch bookkeeping,
// evaluation meetings and run control lives here, once; so the CPU tests cover
// it for every backend. A Backend supplies only what differs between devices:
// the math types (its stage stack, tensors, optimizer), timing, the stage
// input upload, the loss, transfers and collectives, and host views of a
// stage's weights. CpuBackend (cpu_backend.h) and gpu/'s CudaBackend are the
// two; see either for the exact members a Backend has.
//
// Each op is reported as a TraceEvent (through the backend's timing) with the
// global step and the weight version actually used.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/comm/rendezvous.h"
#include "core/comm/run_control.h"
#include "core/io/experiment.h"
#include "core/nn/optimizer.h"
#include "core/nn/sequential.h"
#include "core/plan/partition.h"
#include "core/runtime/parameter_server.h"
#include "core/runtime/pipemare_weights.h"
#include "core/runtime/run_clock.h"
#include "core/runtime/run_recorder.h"
#include "core/runtime/training_data.h"
#include "core/runtime/training_program.h"
#include "core/runtime/weight_stash.h"

namespace pipelab {

// The optimizer an experiment asks for (training.optimizer).
OptimizerSettings optimizer_settings(const OptimizerSpec& spec);

// What every worker of a run shares, whatever the backend. Owned by the executor.
struct WorkerShared {
  const Experiment& experiment;
  const TrainingProgram& program;
  const std::vector<LayerRange>& stage_ranges;      // per pipeline stage
  const std::vector<TensorParallelRole>& tp_roles;  // per model layer
  const RunClock& clock;
  RunControl& control;
  TrainingData& data;
  RunReporter& recorder;  // the run's recorder, or on a rank other than 0 what goes to it
  // Async data parallelism: one server per (stage, shard), at stage * tp + shard.
  std::vector<std::unique_ptr<WeightServer>>& servers;
  Rendezvous& rendezvous;
  // Every worker meets the others after each evaluated step (at the position
  // where that step is over for it); the last to arrive runs at_meeting_point.
  const EvaluatedSteps& evaluated_steps;
  std::function<void(int step)> at_meeting_point;
  std::function<void(const std::string&)> fail;  // ends the run as Failed
};

// Which tensors of a stage a host copy carries (CUDA backend; the CPU's stage
// is its own host view).
enum class ParameterPart { Values, Gradients };

// A device's place in the dp x pp x cp x tp grid, as its backend needs it.
struct WorkerPlace {
  int device = 0;
  int replica = 0;
  int rank = 0;  // pipeline rank
  int shard = 0;
  int context = 0;  // context-parallel rank

  // Its member index in the data-parallel group, which spans the replicas
  // and their context ranks (dp x cp devices holding the same weights).
  int data_parallel_rank(int cp) const { return replica * cp + context; }
};

template <typename Backend>
class DeviceWorker {
 public:
  using Stack = typename Backend::Stack;
  using Tensor = typename Stack::Tensor;
  using Parameter = typename Stack::Parameter;
  using Activations = typename Stack::Activations;
  using Optimizer = typename Backend::Optimizer;
  using Stash = BasicWeightStash<Parameter>;
  using Velocity = PipeMareVelocity<Parameter>;
  using Devices = typename Backend::Devices;

  // Builds the device's stages on its backend (std::invalid_argument when the
  // model cannot be built; the backend's own errors when it does not fit).
  DeviceWorker(WorkerShared& shared, Devices& devices, int device);
  ~DeviceWorker();
  DeviceWorker(const DeviceWorker&) = delete;
  DeviceWorker& operator=(const DeviceWorker&) = delete;

  // The thread body: every window's ops, then returns. Never throws: errors
  // go to shared.fail, a stop just returns.
  void run();

  int device() const { return place_.device; }
  int replica() const { return place_.replica; }
  int shard() const { return place_.shard; }
  int context() const { return place_.context; }
  int chunk_count() const { return static_cast<int>(stages_.size()); }
  int stage_index(int chunk) const { return stages_[chunk].stage; }
  Stack& stage(int chunk) { return *stages_[chunk].layers; }
  const Stash& weight_versions(int chunk) const { return *stages_[chunk].versions; }
  Backend& backend() { return backend_; }
  // A host Sequential holding chunk `chunk`'s current weights (evaluation,
  // parameter servers): the stage itself on the CPU, a copy on a GPU.
  Sequential& host_weights(int chunk);

  // Frees what in-flight micro-batches held (after a stop), so memory returns
  // to weights, gradients and optimizer state.
  void drop_in_flight();

 private:
  // ZeRO: one group of a stage's parameters that `members` replicas share
  // out, each keeping the optimizer state and the summed gradients of its
  // slice [rank x shard, + shard) of the flattened parameters (zeros pad the
  // flat buffer to members x shard).
  struct ZeroShard {
    std::vector<Parameter> parameters;
    std::vector<bool>
        sequence_partial;  // per parameter: its gradient is partial under sequence parallelism
    bool experts = false;  // over the replicas holding the same experts, else over all dp
    int members = 1;
    int rank = 0;
    int64_t shard = 0;  // values per member
    Tensor values;      // [1, shard]: the slice's weights, only from U to the gather after it
    Tensor gradients;   // [1, shard]: the slice's summed gradients of the step
    std::unique_ptr<Optimizer> optimizer;  // over (values, gradients): state for the slice only
    // ZeRO-Offload instead: the slice's master weights and summed gradients
    // on the host (Host), and the optimizer over them (its state Host too).
    pipelab::Tensor host_values;
    pipelab::Tensor host_gradients;
    std::unique_ptr<pipelab::Optimizer> host_optimizer;
    // Zero 3: the weights' shapes (the values are released between uses),
    // and whether the layer holds them whole now.
    std::vector<std::array<int64_t, 2>> weight_shapes;
    bool gathered = true;
    int64_t size_of(size_t parameter) const {
      return weight_shapes[parameter][0] * weight_shapes[parameter][1];
    }
    int64_t begin() const { return rank * shard; }
    int64_t padded() const { return members * shard; }
  };
  struct StageState {
    int stage = 0;
    std::unique_ptr<Stack> layers;
    std::unique_ptr<Optimizer> optimizer;  // null under async data parallelism or optimizer offloading
    std::unique_ptr<pipelab::Optimizer> host_optimizer;  // optimizer offloading: on the host view
    std::unique_ptr<Stash> versions;
    int window_base_version = 0;  // versions at the start of the current window
    std::unique_ptr<Velocity> velocity;  // pipemare's discrepancy correction, or null
    int gradient_delay = 0;  // updates between the F and B of the gradient the next U applies
    std::vector<std::unique_ptr<ZeroShard>> shards;  // ZeRO: the dense group, then the experts'
    // Zero 2 and 3: the layers' gradients with their shapes, while they are
    // released (listed once: under zero 3 a released layer lists fewer).
    std::vector<std::pair<Tensor*, std::array<int64_t, 2>>> released_gradients;
    // Zero 3: per stage layer, its shards (indices into `shards`); and the
    // schedule's weight gathers not yet run, in order: each F, B and BI
    // reports its layers' gathers as the first one.
    std::vector<std::vector<int>> unit_shards;
    std::deque<Op> listed_gathers;
    // Zero 3 without reshard_after_forward: micro-batches between their F
    // and their last backward op (B, or BW), which keep the weights gathered.
    int holding = 0;
  };
  // Zero 3: a collective the schedule lists for a compute op (the ALL_GATHER
  // before it, the REDUCE_SCATTER after it), which the op reports spanning
  // the per-layer collectives it runs in its place.
  struct UnitReport {
    Op op;
    bool listed = false;
    bool open = false;
    int64_t bytes = 0;
  };
  // Zero 3: the compute op running layers now.
  struct UnitOp {
    int chunk = -1;  // -1: none (a recomputation, an evaluation)
    OpKind kind = OpKind::Forward;
    bool frees_weights = true;    // each layer's gathered weights are freed after it
    UnitReport gathers, scatters;
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

  // The next evaluation this worker meets the others at; position -1: none left.
  struct Meeting {
    int step = 0;
    int64_t position = -1;
  };

  void run_windows();
  // " (during B3 s1)" for the op being run, so a failure names it; "" before
  // the first. (The app translates the failure before it and keeps the label:
  // ui/core_message_text.cpp.)
  std::string during_op() const;
  Meeting meeting_from(int step) const;
  void meet(Meeting& next, int64_t position);
  void run_op(const TrainingWindow& window, int index);
  // Runs `body` (which returns the op's bytes) between the backend's begin and end.
  template <typename Body>
  void timed(Op& op, Body&& body);

  void forward(Op& op);
  void backward(Op& op);
  void backward_weight(Op& op);
  void recompute(Op& op);
  int64_t host_transfer(const Op& op);  // Offload or Reload; returns the bytes moved
  // Optimizer offloading: the chunk's optimizer over its host view, state counted as Host.
  pipelab::Optimizer& host_optimizer(int chunk);
  void update(Op& op, int scheduled_version);
  int64_t send(const Op& op);
  int64_t receive(const Op& op);
  int64_t data_parallel_all_reduce(const Op& op);
  // The stage's parameters less the experts' (which `experts` receives)
  // when expert parallelism sums those over fewer replicas.
  std::vector<Parameter> dense_parameters(Stack& layers, std::vector<Parameter> parameters,
                                          std::vector<Parameter>* experts);
  // ZeRO (see the table above; device_worker_zero.h).
  void make_zero_shards(StageState& stage);
  // Zero 3, as the stage is built: layer k's shards, its weights and
  // gradients released right away (the stage is not in stages_ yet).
  void make_unit_shards(StageState& stage, Stack& layers, int k);
  void add_zero_shard(StageState& stage, std::vector<Parameter> parameters, bool experts,
                      const std::vector<Tensor*>& sequence_partial, int layer);
  int64_t reduce_scatter_gradients(const Op& op);
  void update_shards(StageState& stage);
  // A shard's values: its slice of the layers' current weights.
  void copy_out_slice(ZeroShard& shard, MemoryCategory category);
  // Every replica's slice of `shard` all-gathered into its parameters'
  // values (renewed in `category` where released); returns the bytes.
  int64_t gather_slices(ZeroShard& shard, MemoryCategory category);
  // ZeRO-Offload's OFFLOAD (the slices' gradients down) or RELOAD (their new
  // weights up); returns the bytes moved.
  int64_t move_shards(StageState& stage, OpKind kind);
  int64_t gather_weights(const Op& op);
  void release_gradients(StageState& stage);
  // Zero 3: the shard's released weights (or gradients) made again at their
  // shapes; the gathered weights freed; a layer's gradients reduce-scattered
  // into the slice and freed (returns the bytes).
  void renew_released(ZeroShard& shard, bool gradients, MemoryCategory category);
  void free_gathered(ZeroShard& shard);
  int64_t scatter_unit_gradients(ZeroShard& shard);
  void renew_gradients(StageState& stage);
  // Zero 3: a layer's whole weights gathered from the slices (acquire) or
  // freed (release); every layer's, kept whole (hold: evaluations, the end).
  void acquire_unit(int chunk, int layer);
  void release_unit(int chunk, int layer);
  void hold_units(bool hold);
  // Zero 3: a compute op starts (takes the collectives listed for it) or
  // ends (reports them); `report` opens one before its first collective.
  void begin_unit_op(const Op& op, int index);
  void end_unit_op();
  void open_report(UnitReport& report);
  int64_t push(const Op& op);
  int64_t pull(Op& op);
  // A tensor-parallel collective (`kind`: AllReduce, ReduceScatter or
  // AllGather) that a compute op runs for `layer`, timed as the op the
  // schedule lists for it.
  void tensor_parallel_collective(OpKind kind, Tensor& values, int layer);
  // A Transformer block's attention's all-gather (gather) or reduce-scatter
  // over the context-parallel group, reported as the listed op.
  void context_parallel_collective(bool gather, Tensor& values, int layer,
                                   const SliceArrival& arrived);
  // Synced batch norm: a layer's statistics summed over the data-parallel
  // replicas, inside the compute op, timed as the ALLREDUCE dp listed for it.
  void batch_statistics_all_reduce(std::vector<double>& values, int layer);
  // A moe layer's all-to-all over the expert-parallel group, inside the
  // compute op, timed as the ALL_TO_ALL ep listed for it.
  void expert_all_to_all(Tensor& values, int layer);
  // A moe layer's routing of the current op's micro-batch, for the step's metrics.
  void report_expert_load(int layer, const MoeRouting& routing, double aux_loss);
  // Runs `run` (returning its bytes), timed as the first not yet reported
  // collective of `kind`, `group` and `layer` listed right after the current
  // compute op; untimed when none is listed (a recomputation's).
  template <typename Run>
  void inner_collective(OpKind kind, CommGroup group, int layer, Run&& run);
  // Sequence parallelism: the sum over the tensor-parallel group of the
  // gradients each shard took from its slice of the sequence.
  int64_t sequence_partial_all_reduce(const Op& op);
  // The same under zero 2: over the parts of this device's slices that hold them.
  int64_t sequence_partial_slices_all_reduce(StageState& stage);

  // Hands a stage's output to the next stage (F) or its input gradient to the
  // previous one (B/BI): kept for the send, or given directly to the chunk on
  // this device that runs that stage.
  void pass_on(const Op& op, Tensor tensor, bool forward);
  void finish_microbatch(const MicrobatchKey& key, StageState& stage);
  // Sets the version a backward or recompute of `key` reads, and its delay
  // (updates since the F): the F's, or under pipemare the current one.
  void set_backward_version(Op& op, const StageState& stage, const MicrobatchKey& key) const;
  Tensor take(std::map<MicrobatchKey, Tensor>& from, const MicrobatchKey& key, const char* what);
  MicrobatchKey key_of(const Op& op) const { return {op.chunk, op.step, op.microbatch}; }
  WeightServer& server_of(const Op& op);

  WorkerShared& shared_;
  const WorkerPlace place_;
  const int last_stage_;
  // pipemare: no stash; a backward reads what the stage holds (see the schedule table).
  const bool reads_newest_weights_;
  Backend backend_;
  std::vector<StageState> stages_;  // by chunk

  CurrentOp current_;
  UnitOp unit_op_;            // zero 3
  bool units_held_ = false;   // zero 3: every weight whole (hold_units)
  // Per op of the current window: a collective run (and reported) inside a compute op.
  std::vector<char> tensor_parallel_reported_;

  // In-flight micro-batches.
  std::map<MicrobatchKey, Activations> saved_;
  std::map<MicrobatchKey, int> forward_version_;
  std::map<MicrobatchKey, Tensor> inputs_;        // received (or handed over) stage inputs
  std::map<MicrobatchKey, Tensor> output_grads_;  // received gradients, or the loss's
  std::map<MicrobatchKey, Tensor> outgoing_activations_;
  std::map<MicrobatchKey, Tensor> outgoing_gradients_;
};

// Where device `device` sits in `experiment`'s grid.
WorkerPlace worker_place(const Experiment& experiment, int device);

}  // namespace pipelab
