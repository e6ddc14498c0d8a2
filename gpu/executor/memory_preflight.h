// Pre-flight memory check of the CUDA backend: before any device memory is
// allocated, estimate what each virtual device will hold and compare it, per
// physical GPU (summing the virtual devices mapped onto it), with what
// cudaMemGetInfo says is free. A split that cannot fit then fails at once with
// an ExperimentError naming the GPU, its virtual devices, the bytes needed and
// free, and what to change, instead of running out of memory mid-step.
//
// The estimate of a virtual device is
//   the simulator's peak total bytes for it (memory_model.h: weights,
//   gradients, optimizer state, activations in flight, stashed weights,
//   messages), run on the GPU's device profile (h100 or h200) in fp32 even
//   under bf16-mixed, whose 2-byte gradients and activations the backend
//   does not have (it keeps them in float32, and its float32 weights are the
//   masters), except the activations Transformer blocks, experts and the
//   stage's linear and conv2d inputs keep in bf16 for their GEMMs
//   (bf16_kept_activation_bytes, bf16_recomputed_activation_bytes)
//   + under bf16-mixed, the bf16 weight copies and the bf16 roundings of
//     GEMM inputs (bf16_weight_copy_bytes, bf16_rounding_bytes)
//   + its fixed workspace (the cuBLAS workspace of its DeviceContext)
//   + kCublasHandleBytes for its cuBLAS handle
//   + the staging buffer of its largest collective (the simulator models
//     neither): the data-parallel all-reduce's (its gradients' bytes, under
//     synchronous data parallelism) or, under expert parallelism, a moe
//     layer's all-to-all receive buffer (its dispatch buffer's bytes)
//   + the largest im2col matrix of its convolutions over a micro-batch
//     (gpu/layers/conv2d.h: the simulator does not model it either)
//   + the largest attention workspace of its Transformer blocks over a
//     micro-batch (largest_attention_workspace_bytes: nor this)
//   + the largest per-token layer's copies of its input and output gradient
//     over a micro-batch (largest_per_token_copy_bytes: nor these)
//   + a margin of kEstimateMarginPercent percent of the simulated peak
//     (loss buffers, labels, allocation rounding)
//   + kCacheOverheadPercent percent of the simulated peak for blocks its
//     caching allocator holds but does not count.
// and each GPU adds kNcclCommunicatorBytes per NCCL communicator it takes part
// in (estimate_nccl_bytes_per_gpu; across processes, a rank's GPU those its
// rank holds with other ranks, estimate_rank_nccl_bytes, and the ranks that
// share a GPU add theirs up: rank_memory_check.h). The CUDA context itself is
// already gone from the free bytes measured (query_gpus() creates it before
// measuring).
//
// These allowances are assumptions, not measurements (the backend has not
// run on a GPU yet); each errs high, and an allocation that still fails
// first empties every cache on its GPU and retries (allocator_registry.h).
// Measure them on a GPU (cudaMemGetInfo around cublasCreate, around NCCL's
// first transfer, and the allocators' reserved against counted bytes at the
// end of a run) and tighten them.
//
// Everything here is host arithmetic, no CUDA calls: host tests check it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/io/experiment.h"
#include "core/plan/partition.h"
#include "core/plan/stage_profile.h"
#include "core/sim/cost_model.h"
#include "gpu/comm/rank_comm_plan.h"

namespace pipelab::gpu {

inline constexpr int64_t kEstimateMarginPercent = 5;

// cuBLAS: the handle's own device memory (its 32 MiB workspace comes from our
// allocator and is counted as Workspace). A few MiB in practice; allow 8.
inline constexpr int64_t kCublasHandleBytes = int64_t{8} << 20;

// The caching allocator reuses a freed block only for requests of its size
// class (512-byte granularity) and keeps blocks that comm streams used until
// those streams pass them, so what it reserves exceeds what it counts: the
// classes that peak at different times (forward activations, backward
// gradients, messages) are all held. Allow 10 % of the peak.
inline constexpr int64_t kCacheOverheadPercent = 10;

// NCCL, per communicator and GPU: its buffers, one per channel, peer and
// protocol (the Simple protocol's is NCCL_BUFFSIZE, 4 MiB by default, LL128's
// about as large), over up to 16-32 channels between NVLink GPUs, plus its
// work queues. Allow 256 MiB. (In one process NCCL connects lazily, so a
// communicator that never carries traffic, like the world the others are
// split from, holds far less; it is counted all the same. Across processes
// RankWorld has NCCL connect every collective algorithm when a communicator
// is made, the world's included: rank_world.h.)
inline constexpr int64_t kNcclCommunicatorBytes = int64_t{256} << 20;

// The hardware catalogue's device for a GPU model name as CUDA reports it
// ("NVIDIA A100-SXM4-40GB" -> "a100-40gb", "NVIDIA H100 80GB HBM3" -> "h100");
// "h200" for a GPU the catalogue lacks (the closest to a recent data-centre
// GPU; what it predicts is then only a guide).
std::string device_profile_name_for_gpu(const std::string& gpu_name);

// Bytes each virtual device of `experiment` will hold at its peak (see above),
// with `workspace_bytes` of fixed workspace per device. Throws
// std::invalid_argument (from the partitioner or the schedule builder) for a
// plan that cannot be built.
std::vector<int64_t> estimate_device_bytes(const Experiment& experiment,
                                           const DeviceProfile& profile, int64_t workspace_bytes);

// The largest im2col matrix that a convolution among `layers` (a conv2d, or
// one inside a residual block) holds over a micro-batch; 0 without any.
int64_t largest_im2col_bytes(const Experiment& experiment, LayerRange layers);

// The most that the attention core of a Transformer block among `layers`
// holds in Workspace at once over a micro-batch (gpu/layers/attention.cpp):
// score-sized float32 buffers of [batch * heads / tp * seq, seq], which its
// backward makes for dP, for P recomputed under selective recompute and for
// P with dropout applied (its forward makes fewer), and under bf16-mixed
// half a buffer more for P or dS rounded for its GEMMs (not among the inputs
// bf16_rounding_bytes counts); 0 without blocks. Where the fused kernels run
// (gpu/layers/attention.h: bf16-mixed, selective recompute, heads they take)
// none of these: the backward's D_i and the lse a block keeps, one float per
// row each. The simulator does not model them: the CPU layer uses one
// [seq, seq] buffer of each at a time, one head after another.
int64_t largest_attention_workspace_bytes(const Experiment& experiment, LayerRange layers);

// The most that a linear or layer norm of a sequence model among `layers`
// copies for a call over a micro-batch (gpu/layers/per_token.h: a
// DeviceTensor has no views, so its input, and in the backward its output
// gradient, are copied into per-token shaped Workspace): its input and
// output widths, as the shard holds them, times the positions it sees; 0
// outside a sequence model. For the output layer that is a copy of the
// logits' gradient, which the simulator's gradient buffers count only once.
int64_t largest_per_token_copy_bytes(const Experiment& experiment, LayerRange layers);

// bf16-mixed on the CUDA backend, per stage (chunk): the bf16 copies of its
// weights, 2 bytes per parameter (errs high: biases, norms, embeddings and a
// moe gate keep none), held all along; the bytes of one micro-batch's kept
// activations that its Transformer blocks, experts and linear and conv2d
// inputs keep in bf16, rounded in the forward (gpu/layers/kept_bf16.h),
// which are half their float32
// bytes; and the most that the bf16 roundings of GEMM inputs made for one
// call (cublas_gemm.h's RoundedGemmInput) hold at once, half the float32
// bytes of one micro-batch's kept activations that are not kept in bf16
// (`stage` is the float32 profile, whose activation_bytes count the
// bf16-kept ones at 4 bytes: twice `bf16_kept_bytes`), backward gradient
// buffers and im2col matrix, since each rounded input is one of those. (Under selective recompute
// the attention probabilities that the backward recomputes are not among them, so their rounding is
// not counted.) Under full recompute, of what recomputing puts back
// (StageProfile::recompute_working_bytes: the executors rebuild the whole stage), the bytes kept in
// bf16: all of them (bf16_recomputed_activation_bytes). Under sequence parallelism, of what BI
// keeps for BW (StageProfile::split_backward_kept_bytes), the norm outputs its blocks gather again,
// in bf16 (bf16_gathered_norm_bytes); the backward's working bytes
// (StageProfile::backward_working_bytes, the largest layer's) still count them at 4 bytes, erring
// high.
int64_t bf16_weight_copy_bytes(const StageProfile& stage);
int64_t bf16_kept_activation_bytes(const Experiment& experiment, LayerRange layers);
int64_t bf16_recomputed_activation_bytes(const Experiment& experiment, LayerRange layers);
int64_t bf16_gathered_norm_bytes(const Experiment& experiment, LayerRange layers);
int64_t bf16_rounding_bytes(const StageProfile& stage, int64_t bf16_kept_bytes,
                            int64_t im2col_bytes);

// NCCL's bytes on each of `gpus` GPUs: kNcclCommunicatorBytes per
// communicator it takes part in (comm_world.h: one per GPU set of the run's
// message links and all-reduce groups, plus the world). Zeros without NCCL.
std::vector<int64_t> estimate_nccl_bytes_per_gpu(const Experiment& experiment,
                                                 const std::vector<int>& gpu_of_device, int gpus);

// Across processes (pipelab-cli under mpirun), NCCL's bytes on `rank`'s GPU:
// kNcclCommunicatorBytes per communicator RankWorld makes for it
// (rank_comm_plan.h's communicators_on_rank: the world over the ranks and
// every communicator of the plan it is in). Its virtual devices share that
// one GPU, so they need no NCCL among themselves; zero when nothing between
// ranks is on NCCL (host staging).
int64_t estimate_rank_nccl_bytes(const RankCommPlan& plan, int rank);

// A GPU whose virtual devices need more than it has free.
struct GpuShortfall {
  int gpu = 0;
  std::vector<int> devices;  // the virtual devices mapped onto it
  int64_t needed_bytes = 0;  // their estimates, summed, plus the GPU's NCCL bytes
  int64_t nccl_bytes = 0;    // of which NCCL's
  int64_t free_bytes = 0;
};

// Every GPU where the estimates of its virtual devices and its NCCL bytes add
// up to more than its free bytes. needed_per_device and gpu_of_device have one
// entry per virtual device; free_per_gpu and nccl_per_gpu one per GPU
// (nccl_per_gpu may be empty: none).
std::vector<GpuShortfall> find_memory_shortfalls(const std::vector<int64_t>& needed_per_device,
                                                 const std::vector<int>& gpu_of_device,
                                                 const std::vector<int64_t>& free_per_gpu,
                                                 const std::vector<int64_t>& nccl_per_gpu = {});

// One line for the user, e.g.
//   "the split does not fit in GPU memory: GPU 0 (virtual devices 0-3) needs
//   160.2 GiB (the largest, device 0, 41.0 GiB; NCCL 512.0 MiB) but has
//   139.5 GiB free; use
//   more pipeline stages (parallel.pp) or tensor shards (parallel.tp),
//   parallel.recompute = true, a schedule with fewer micro-batches in flight
//   (1f1b rather than gpipe), a smaller batch or model, or backend.type = cpu"
// Lists every short GPU. `shortfalls` must not be empty. (Across processes:
// rank_memory_check.h.)
std::string memory_shortfall_message(const std::vector<GpuShortfall>& shortfalls,
                                     const std::vector<int64_t>& needed_per_device);

// The message's parts: kMemoryShortfallStart; describe_shortfall for each
// short GPU, the GPU called `gpu_name`: "GPU 0 (virtual devices 0-3) needs
// 160.2 GiB (the largest, device 0, 41.0 GiB; NCCL 512.0 MiB) but has 139.5
// GiB free"; then "; " and memory_fixes: "use more pipeline stages
// (parallel.pp) ... or backend.type = cpu", or for a GPU that ranks share
// (rank_memory_check.h), where more stages stay on that GPU and do not help,
// "use fewer ranks per GPU (...), parallel.offload = activations, ...".
inline constexpr char kMemoryShortfallStart[] = "the split does not fit in GPU memory: ";
std::string describe_shortfall(const GpuShortfall& shortfall,
                               const std::vector<int64_t>& needed_per_device,
                               const std::string& gpu_name);
std::string memory_fixes(bool gpu_shared_by_ranks);

}  // namespace pipelab::gpu
