#include "gpu/executor/cuda_executor.h"

#include <algorithm>
#include <cassert>
#include <optional>
#include <set>
#include <stdexcept>

#include "core/io/experiment_io.h"
#include "core/io/hardware_catalogue.h"
#include "core/runtime/device_worker_impl.h"
#include "core/runtime/process_share.h"
#include "core/runtime/training_program.h"
#include "gpu/device/cuda_check.h"
#include "gpu/device/device_guard.h"
#include "gpu/device/device_query.h"
#include "gpu/executor/device_mapping.h"
#include "gpu/executor/memory_preflight.h"
#include "gpu/memory/out_of_memory.h"
#include "gpu/executor/rank_memory_check.h"

namespace pipelab {
template class DeviceWorker<gpu::CudaBackend>;
template class PipelineExecutor<gpu::CudaBackend>;
}  // namespace pipelab

namespace pipelab::gpu {
namespace {

// The simulator's profile of the GPU called `gpu_name` (memory_preflight.h).
DeviceProfile profile_of_gpu(const std::string& gpu_name) {
  const std::optional<DeviceProfile> profile =
      find_device_profile(device_profile_name_for_gpu(gpu_name));
  assert(profile);
  return *profile;
}

// Fails before any device memory is used when the split cannot fit on this
// process's GPUs.
void check_memory(const Experiment& experiment, const GpuInventory& inventory,
                  const std::vector<int>& gpu_of_device) {
  const std::vector<int64_t> needed =
      estimate_device_bytes(experiment, profile_of_gpu(inventory.gpus.front().name),
                            DeviceContext::kCublasWorkspaceBytes);
  std::vector<int64_t> free_per_gpu;
  for (const GpuInfo& gpu : inventory.gpus) free_per_gpu.push_back(gpu.free_bytes);
  const int gpus = static_cast<int>(inventory.gpus.size());
  const std::vector<GpuShortfall> shortfalls =
      find_memory_shortfalls(needed, gpu_of_device, free_per_gpu,
                             estimate_nccl_bytes_per_gpu(experiment, gpu_of_device, gpus));
  if (!shortfalls.empty()) throw ExperimentError(memory_shortfall_message(shortfalls, needed));
}

// Across processes: every rank's GPU identity, by rank; this rank's GPU is
// CUDA device `gpu`. Without the share's exchange every rank counts as on one
// unknown GPU (then everything between ranks is staged through the host).
std::vector<std::string> exchange_gpu_identities(const ProcessShare& share, int gpu) {
  if (!share.exchange) return std::vector<std::string>(static_cast<size_t>(share.ranks), "unknown");
  return share.exchange(gpu_identity(gpu));
}

// Across processes, the same check on every rank (rank_memory_check.h): this
// rank's devices first_hosted .. first_hosted + hosted_count - 1 on `gpu`,
// whose identity is `identity`, with its communicators of `between_ranks`,
// summed with those of the ranks that share its GPU. Without the share's
// exchange this rank is checked alone.
void check_rank_memory(const Experiment& experiment, const ProcessShare& share, const GpuInfo& gpu,
                       const std::string& identity, const RankCommPlan& between_ranks,
                       int first_hosted, int hosted_count) {
  RankGpuReport mine;
  mine.rank = share.rank;
  mine.gpu = identity;
  mine.cuda_device = gpu.index;
  // Read again now that every rank has passed the identities' exchange, so
  // every rank's CUDA context exists (rank_memory_check.h).
  mine.free_bytes = free_gpu_bytes(gpu.index);
  mine.first_device = first_hosted;
  const std::vector<int64_t> needed = estimate_device_bytes(experiment, profile_of_gpu(gpu.name),
                                                            DeviceContext::kCublasWorkspaceBytes);
  mine.device_bytes.assign(needed.begin() + first_hosted,
                           needed.begin() + first_hosted + hosted_count);
  mine.nccl_bytes = estimate_rank_nccl_bytes(between_ranks, share.rank);
  std::vector<RankGpuReport> reports;
  if (share.exchange) {
    for (const std::string& text : share.exchange(encode_rank_gpu_report(mine)))
      reports.push_back(decode_rank_gpu_report(text));
  } else {
    reports = {mine};
  }
  const std::vector<RankGpuShortfall> shortfalls = find_rank_memory_shortfalls(reports);
  if (!shortfalls.empty())
    throw ExperimentError(rank_memory_shortfall_message(shortfalls, reports));
}

// Peer copies between GPUs go over NVLink/PCIe directly once peer access is on.
void enable_peer_access(const std::vector<int>& gpus) {
  for (int from : gpus)
    for (int to : gpus) {
      if (from == to) continue;
      int possible = 0;
      PIPELAB_CUDA_CHECK(cudaDeviceCanAccessPeer(&possible, from, to));
      if (!possible) continue;
      DeviceGuard guard(from);
      const cudaError_t status = cudaDeviceEnablePeerAccess(to, 0);
      if (status == cudaErrorPeerAccessAlreadyEnabled) {
        cudaGetLastError();  // already on: fine, and not an error to leave behind
        continue;
      }
      PIPELAB_CUDA_CHECK(status);
    }
}

// The user's line for a CUDA call that failed while building the run.
ExperimentError cuda_failure(const std::string& what, const CudaError& error) {
  return ExperimentError("backend.type = cuda: " + what + ": " + error.what() +
                         "; use backend.type = cpu");
}

// The launch line's words for how the GEMMs compute.
std::string gemm_description(const Experiment& experiment) {
  if (experiment.training.precision == Precision::Bf16Mixed)
    return "bf16-mixed (bf16 GEMM inputs, fp32 master weights)";
  return std::string(experiment.backend.tf32 ? "tf32" : "fp32") + " GEMMs";
}

}  // namespace

std::string no_cuda_device_message(const std::string& reason) {
  return "backend.type = cuda, but " + (reason.empty() ? std::string("no CUDA device") : reason) +
         "; use backend.type = cpu (pipelab-cli: --backend cpu)";
}

CudaExecutor::CudaExecutor(const Experiment& experiment, EventSink& sink,
                           const ExecutorOptions& options)
    : PipelineExecutor(experiment, sink, options) {
  const ParallelPlan& plan = experiment_.parallel;
  const int devices = plan.devices();

  // Across processes, no free bytes here: a rank makes a CUDA context on its
  // own GPU only (below; device_query.h says why).
  const GpuInventory inventory = query_gpus(/*read_free_bytes=*/options_.process == nullptr);
  if (inventory.gpus.empty())
    throw ExperimentError(no_cuda_device_message(inventory.unavailable_reason));

  // The memory check comes first: preparing the run builds host copies of
  // the model (the evaluator's), which for a model far too large for the
  // GPUs could exhaust the host's memory before the check said so.
  std::vector<int> gpu_of_device;
  RankCommPlan rank_plan;  // across processes
  try {
    // Positions in the inventory, then CUDA's device numbers. Across
    // processes a rank runs its devices on one GPU (device_mapping.h), and
    // the plan of NCCL between ranks comes first: the memory check counts
    // this rank's communicators.
    const int gpus = static_cast<int>(inventory.gpus.size());
    const ProcessShare* share = options_.process;
    const int rank_gpu = share ? gpu_for_local_rank(share->local_rank, gpus) : 0;
    gpu_of_device =
        share ? map_rank_devices(devices, first_hosted_device(), hosted_device_count(), rank_gpu)
              : map_virtual_devices(devices, gpus);
    if (share) {
      const GpuInfo& gpu = inventory.gpus[static_cast<size_t>(rank_gpu)];
      // This rank's GPU is this thread's from here on, its context made now,
      // before the identities' exchange (rank_memory_check.h). Current, so
      // that this thread's DeviceGuards restore it when they end, rather than
      // device 0, whose context cudaSetDevice would make on every rank.
      PIPELAB_CUDA_CHECK(cudaSetDevice(gpu.index));
      PIPELAB_CUDA_CHECK(cudaFree(nullptr));  // the usual way to make the context at once
      const std::vector<std::string> gpu_of_rank = exchange_gpu_identities(*share, gpu.index);
      rank_plan = plan_between_ranks(gpu_of_rank);
      check_rank_memory(experiment_, *share, gpu, gpu_of_rank[static_cast<size_t>(share->rank)],
                        rank_plan, first_hosted_device(), hosted_device_count());
    } else {
      check_memory(experiment_, inventory, gpu_of_device);
    }
    for (int& gpu : gpu_of_device)
      if (gpu >= 0) gpu = inventory.gpus[static_cast<size_t>(gpu)].index;
  } catch (const std::invalid_argument& error) {
    throw ExperimentError(error.what());
  } catch (const CudaError& error) {  // reading this rank's GPU identity
    throw cuda_failure("the GPU could not be set up", error);
  }
  prepare_run();

  try {
    build_devices(gpu_of_device, std::move(rank_plan));
    build_groups();
  } catch (const GpuOutOfMemory& error) {
    throw ExperimentError(error.what());
  } catch (const CudaError& error) {
    throw cuda_failure("the GPU could not be set up", error);
  }

  try {
    build_workers();
    // Host mirrors pin their buffers when made: make every one the run uses
    // (evaluation: replica 0's, and under expert parallelism the rest of its
    // expert-parallel group's; parameter servers and optimizer offloading's
    // host updates: all) now, not mid-run.
    const bool async_data_parallel = plan.update == UpdateMode::Async && plan.dp > 1;
    const bool host_updates = plan.offload == OffloadMode::Optimizer;
    const bool validate = data_->validation().samples > 0;  // rank 0 evaluates, every rank mirrors
    for (const auto& worker : workers_)
      if (async_data_parallel || host_updates || (validate && worker->replica() < plan.ep))
        for (int chunk = 0; chunk < worker->chunk_count(); ++chunk)
          worker->backend().host_stage(worker->stage(chunk), chunk);
  } catch (const std::invalid_argument& error) {
    throw ExperimentError(error.what());
  } catch (const GpuOutOfMemory& error) {
    throw ExperimentError(error.what());
  } catch (const CudaError& error) {
    throw cuda_failure("the model could not be built", error);
  }

  if (experiment_.backend.threads > 0)
    sink_.add_message("backend.threads = " + std::to_string(experiment_.backend.threads) +
                      " is ignored: the cuda backend runs one host thread per virtual device (" +
                      std::to_string(devices) + ")");
  launch_message_ = describe_launch(inventory, gpu_of_device);
}

std::string CudaExecutor::describe_launch(const GpuInventory& inventory,
                                          const std::vector<int>& gpu_of_device) const {
  const ParallelPlan& plan = experiment_.parallel;
  bool uses_nccl = devices_->routes->nccl_links() > 0;
  for (const auto& group : devices_->groups) uses_nccl = uses_nccl || group->uses_nccl();
  std::string gpu_names;
  std::set<std::string> names;
  for (const GpuInfo& gpu : inventory.gpus)
    if (names.insert(gpu.name).second) gpu_names += (gpu_names.empty() ? "" : ", ") + gpu.name;
  std::string placement = describe_mapping(gpu_of_device);
  if (const ProcessShare* share = options_.process) {
    std::vector<int> hosted(static_cast<size_t>(hosted_device_count()));
    for (int i = 0; i < hosted_device_count(); ++i)
      hosted[static_cast<size_t>(i)] = first_hosted_device() + i;
    placement = std::to_string(share->ranks) + " ranks; rank " + std::to_string(share->rank) +
                " runs devices " + device_list_text(hosted) + " on GPU " +
                std::to_string(gpu_of_device[static_cast<size_t>(hosted[0])]) + " (its local rank " +
                std::to_string(share->local_rank) + " modulo the " + std::to_string(inventory.gpus.size()) +
                " GPU(s) it sees)";
  }
  std::string paths = uses_nccl ? "NCCL between GPUs" : "device-to-device copies";
  if (options_.process) paths += "; " + describe_rank_paths(devices_->rank_plan);
  return "cuda backend: " + placement + " (" + gpu_names + "), dp " + std::to_string(plan.dp) +
         " x tp " + std::to_string(plan.tp) + " x pp " + std::to_string(plan.pp) +
         (plan.ep > 1 && model_has_experts(experiment_.model)
              ? ", experts over ep " + std::to_string(plan.ep)
              : "") +
         ", schedule " + schedule_name(plan.schedule) + ", " + std::to_string(total_steps_) +
         " steps of " + std::to_string(experiment_.training.batch_size) + " samples, " +
         gemm_description(experiment_) + ", " + paths;
}

void CudaExecutor::build_devices(const std::vector<int>& gpu_of_device, RankCommPlan rank_plan) {
  const GemmPrecision precision =
      experiment_.backend.tf32 ? GemmPrecision::Tf32 : GemmPrecision::Fp32;
  std::set<int> gpus;
  for (int d = first_hosted_device(); d < first_hosted_device() + hosted_device_count(); ++d)
    gpus.insert(gpu_of_device[static_cast<size_t>(d)]);
  if (gpus.size() > 1) enable_peer_access({gpus.begin(), gpus.end()});
  devices_ = std::make_unique<CudaDevices>();
  devices_->devices.resize(gpu_of_device.size());
  for (int d = first_hosted_device(); d < first_hosted_device() + hosted_device_count(); ++d) {
    auto& device = devices_->devices[static_cast<size_t>(d)];
    device = std::make_unique<VirtualDevice>(d, gpu_of_device[static_cast<size_t>(d)], precision,
                                             *control_);
    device->context->set_mixed_bf16(experiment_.training.precision == Precision::Bf16Mixed);
    device->allocator().set_listener([this, d](const MemoryBytes& bytes) {
      reporter().memory({d, clock_.now(), bytes});
    });
  }
  devices_->comm_world = std::make_unique<CommWorld>(std::vector<int>(gpus.begin(), gpus.end()));
  std::vector<std::pair<int, int>> links;
  for (const auto& link : message_links(program_->schedule()))
    if (!crosses_processes({link.first, link.second}, first_hosted_device(), hosted_device_count()))
      links.push_back(link);
  devices_->routes =
      std::make_unique<MessageRoutes>(devices_->devices, links, *devices_->comm_world);
  if (options_.process) {
    build_host_side();
    build_rank_world(gpu_of_device[static_cast<size_t>(first_hosted_device())],
                     std::move(rank_plan));
  }
}

RankCommPlan CudaExecutor::plan_between_ranks(const std::vector<std::string>& gpu_of_rank) const {
  const ProcessShare& share = *options_.process;
  const ParallelPlan& plan = experiment_.parallel;
  std::vector<int> rank_of_device(static_cast<size_t>(plan.devices()));
  for (int d = 0; d < plan.devices(); ++d)
    rank_of_device[static_cast<size_t>(d)] = d / share.device_count;
  // The run's program (prepare_run makes it after the memory check, from
  // the same inputs): its first window's messages are the links.
  const TrainingProgram program(
      plan,
      profile_stages(experiment_.model, plan, microbatch_size(experiment_),
                     experiment_.training.precision),
      total_steps_);
  return plan_rank_communicators(program.schedule(),
                                 collective_groups(plan, model_has_experts(experiment_.model))
                                     .with_collectives(plan.sequence_parallel),
                                 rank_of_device, gpu_of_rank, kHaveNccl);
}

void CudaExecutor::build_rank_world(int gpu, RankCommPlan rank_plan) {
  const ProcessShare& share = *options_.process;
  devices_->rank_plan = std::move(rank_plan);
  devices_->rank_link_communicator =
      nccl_links_of(devices_->rank_plan, first_hosted_device(), hosted_device_count());
  for (const auto& [link, communicator] : devices_->rank_link_communicator)
    devices_->rank_link_stream.emplace(link, CudaStream(gpu));
#ifdef PIPELAB_HAVE_NCCL
  const SetupWait setup{.rank = share.rank,
                        .timeout = std::chrono::duration<double>(share.setup_timeout_s),
                        .stopping = [control = control_.get()] { return control->stopping(); }};
  devices_->rank_world = std::make_unique<RankWorld>(devices_->rank_plan, share.rank, share.ranks,
                                                     gpu, share.exchange, setup);
  devices_->comm_world->attach(devices_->rank_world.get());
#else
  (void)share;
#endif
}

void CudaExecutor::build_host_side() {
  // The CPU backend's host mailboxes and transport (cuda_backend.h); the
  // messages waiting in them are host memory, not counted on the GPU.
  auto host = std::make_unique<CpuDevices>();
  host->allocators.resize(devices_->devices.size());
  host->mailboxes.resize(devices_->devices.size());
  for (int d = first_hosted_device(); d < first_hosted_device() + hosted_device_count(); ++d) {
    host->allocators[static_cast<size_t>(d)] = std::make_unique<DeviceAllocator>(d);
    host->mailboxes[static_cast<size_t>(d)] =
        std::make_unique<Mailbox>(d, *host->allocators[static_cast<size_t>(d)], *control_);
  }
  host->connect(options_.process->make_transport);
  devices_->host = std::move(host);
}

void CudaExecutor::build_groups() {
  CudaDevices& cuda = *devices_;
  const size_t devices = cuda.devices.size();
  for (auto* group_of : {&cuda.data_parallel_group_of, &cuda.tensor_parallel_group_of,
                         &cuda.expert_parallel_group_of, &cuda.expert_data_parallel_group_of,
                         &cuda.context_parallel_group_of})
    group_of->assign(devices, nullptr);
  for (auto* ring_of :
       {&cuda.data_parallel_ring_of, &cuda.tensor_parallel_ring_of, &cuda.expert_parallel_ring_of,
        &cuda.expert_data_parallel_ring_of, &cuda.context_parallel_ring_of})
    ring_of->assign(devices, RingGroup{});
  for (auto* rank_comm_of :
       {&cuda.data_parallel_rank_comm_of, &cuda.tensor_parallel_rank_comm_of,
        &cuda.expert_parallel_rank_comm_of, &cuda.expert_data_parallel_rank_comm_of,
        &cuda.context_parallel_rank_comm_of})
    rank_comm_of->assign(devices, -1);
  // The rank plan lists the groups in this order too (CollectiveGroups::all).
  size_t planned = 0;
  auto make_groups = [&](const std::vector<std::vector<int>>& groups, MessageKind kind,
                         std::vector<DeviceGroup*>& group_of, std::vector<RingGroup>& ring_of,
                         std::vector<int>& rank_comm_of) {
    for (const std::vector<int>& members : groups) {
      const RankRoute route = planned < cuda.rank_plan.groups.size()
                                  ? cuda.rank_plan.groups[planned]
                                  : RankRoute{};
      ++planned;
      if (route.path == RankPath::Nccl) {
        for (int member : members)
          if (cuda.hosts(member)) rank_comm_of[static_cast<size_t>(member)] = route.communicator;
        continue;
      }
      if (crosses_processes(members, first_hosted_device(), hosted_device_count())) {
        // Staged through the host: every member of this rank joins the ring.
        for (int rank = 0; rank < static_cast<int>(members.size()); ++rank) {
          const int member = members[static_cast<size_t>(rank)];
          if (!cuda.hosts(member)) continue;
          RingGroup& ring = ring_of[static_cast<size_t>(member)];
          ring.kind = kind;
          ring.devices = members;
          ring.rank = rank;
          ring.transport = &cuda.transport();
          ring.mailbox = &cuda.host_mailbox(member);
        }
        continue;
      }
      std::vector<VirtualDevice*> member_devices;
      for (int member : members)
        member_devices.push_back(cuda.devices[static_cast<size_t>(member)].get());
      cuda.groups.push_back(
          std::make_unique<DeviceGroup>(member_devices, *control_, *cuda.comm_world));
      for (int member : members) group_of[static_cast<size_t>(member)] = cuda.groups.back().get();
    }
  };
  const CollectiveGroups groups =
      collective_groups(experiment_.parallel, model_has_experts(experiment_.model));
  make_groups(groups.data_parallel, MessageKind::DataParallelChunk, cuda.data_parallel_group_of,
              cuda.data_parallel_ring_of, cuda.data_parallel_rank_comm_of);
  make_groups(groups.tensor_parallel, MessageKind::TensorParallelChunk,
              cuda.tensor_parallel_group_of, cuda.tensor_parallel_ring_of,
              cuda.tensor_parallel_rank_comm_of);
  make_groups(groups.expert_parallel, MessageKind::ExpertParallelChunk,
              cuda.expert_parallel_group_of, cuda.expert_parallel_ring_of,
              cuda.expert_parallel_rank_comm_of);
  make_groups(groups.expert_data_parallel, MessageKind::ExpertDataParallelChunk,
              cuda.expert_data_parallel_group_of, cuda.expert_data_parallel_ring_of,
              cuda.expert_data_parallel_rank_comm_of);
  make_groups(groups.context_parallel, MessageKind::ContextParallelChunk,
              cuda.context_parallel_group_of, cuda.context_parallel_ring_of,
              cuda.context_parallel_rank_comm_of);
}

void CudaExecutor::after_failure() {
  // A fault on one GPU leaves NCCL kernels on the others waiting for it:
  // abort the communicators so their workers' waits return.
  // Those between ranks too (attached to it), so no other rank's kernels
  // wait for this one.
  if (devices_ && devices_->comm_world) devices_->comm_world->abort();
}

CudaExecutor::~CudaExecutor() { stop_and_join(); }

}  // namespace pipelab::gpu
