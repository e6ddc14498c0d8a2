#include "gpu/executor/cuda_executor.h"

#include <cassert>
#include <optional>
#include <set>
#include <stdexcept>

#include "core/io/experiment_io.h"
#include "core/runtime/device_worker_impl.h"
#include "gpu/device/cuda_check.h"
#include "gpu/device/device_guard.h"
#include "gpu/executor/device_mapping.h"
#include "gpu/device/device_query.h"
#include "gpu/memory/memory_preflight.h"
#include "gpu/memory/out_of_memory.h"

namespace pipelab {
template class DeviceWorker<gpu::CudaBackend>;
template class PipelineExecutor<gpu::CudaBackend>;
}  // namespace pipelab

namespace pipelab::gpu {
namespace {

// Fails before any device memory is used when the split cannot fit.
void check_memory(const Experiment& experiment, const GpuInventory& inventory,
                  const std::vector<int>& gpu_of_device) {
  const std::string profile_name = device_profile_name_for_gpu(inventory.gpus.front().name);
  const std::optional<DeviceProfile> profile = find_device_profile(profile_name);
  assert(profile);
  const std::vector<int64_t> needed =
      estimate_device_bytes(experiment, *profile, DeviceContext::kCublasWorkspaceBytes);
  std::vector<int64_t> free_per_gpu;
  for (const GpuInfo& gpu : inventory.gpus) free_per_gpu.push_back(gpu.free_bytes);
  const std::vector<int64_t> nccl = estimate_nccl_bytes_per_gpu(
      experiment, gpu_of_device, static_cast<int>(inventory.gpus.size()));
  const std::vector<GpuShortfall> shortfalls =
      find_memory_shortfalls(needed, gpu_of_device, free_per_gpu, nccl);
  if (!shortfalls.empty()) throw ExperimentError(memory_shortfall_message(shortfalls, needed));
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

  const GpuInventory inventory = query_gpus();
  if (inventory.gpus.empty())
    throw ExperimentError(no_cuda_device_message(inventory.unavailable_reason));

  // The memory check comes first: preparing the run builds host copies of
  // the model (the evaluator's), which for a model far too large for the
  // GPUs could exhaust the host's memory before the check said so.
  std::vector<int> gpu_of_device;
  try {
    // Positions in the inventory, then CUDA's device numbers.
    gpu_of_device = map_virtual_devices(devices, static_cast<int>(inventory.gpus.size()));
    check_memory(experiment_, inventory, gpu_of_device);
    for (int& gpu : gpu_of_device) gpu = inventory.gpus[static_cast<size_t>(gpu)].index;
  } catch (const std::invalid_argument& error) {
    throw ExperimentError(error.what());
  }
  prepare_run();

  try {
    build_devices(gpu_of_device);
    build_groups();
  } catch (const GpuOutOfMemory& error) {
    throw ExperimentError(error.what());
  } catch (const CudaError& error) {
    throw ExperimentError(std::string("backend.type = cuda: the GPU could not be set up: ") +
                          error.what() + "; use backend.type = cpu");
  }

  try {
    build_workers();
    // Host mirrors pin their buffers when made: make every one the run uses
    // (evaluation: replica 0's; parameter servers: all) now, not mid-run.
    const bool async_data_parallel = plan.update == UpdateMode::Async && plan.dp > 1;
    const bool validate = evaluator_ != nullptr;
    for (const auto& worker : workers_)
      if (async_data_parallel || (validate && worker->replica() == 0))
        for (int chunk = 0; chunk < worker->chunk_count(); ++chunk)
          worker->backend().host_stage(worker->stage(chunk), chunk);
  } catch (const std::invalid_argument& error) {
    throw ExperimentError(error.what());
  } catch (const GpuOutOfMemory& error) {
    throw ExperimentError(error.what());
  } catch (const CudaError& error) {
    throw ExperimentError(std::string("backend.type = cuda: the model could not be built: ") +
                          error.what() + "; use backend.type = cpu");
  }

  if (experiment_.backend.threads > 0)
    sink_.add_message("backend.threads = " + std::to_string(experiment_.backend.threads) +
                      " is ignored: the cuda backend runs one host thread per virtual device (" +
                      std::to_string(devices) + ")");
  bool uses_nccl = devices_->routes->nccl_links() > 0;
  for (const auto& group : devices_->groups) uses_nccl = uses_nccl || group->uses_nccl();
  std::string gpu_names;
  std::set<std::string> names;
  for (const GpuInfo& gpu : inventory.gpus)
    if (names.insert(gpu.name).second) gpu_names += (gpu_names.empty() ? "" : ", ") + gpu.name;
  launch_message_ = "cuda backend: " + describe_mapping(gpu_of_device) + " (" + gpu_names +
                    "), dp " + std::to_string(plan.dp) + " x tp " + std::to_string(plan.tp) +
                    " x pp " + std::to_string(plan.pp) + ", schedule " +
                    schedule_name(plan.schedule) + ", " + std::to_string(total_steps_) +
                    " steps of " + std::to_string(experiment_.training.batch_size) + " samples, " +
                    gemm_description(experiment_) + ", " +
                    (uses_nccl ? "NCCL between GPUs" : "device-to-device copies");
}

void CudaExecutor::build_devices(const std::vector<int>& gpu_of_device) {
  const GemmPrecision precision =
      experiment_.backend.tf32 ? GemmPrecision::Tf32 : GemmPrecision::Fp32;
  std::set<int> gpus(gpu_of_device.begin(), gpu_of_device.end());
  if (gpus.size() > 1) enable_peer_access({gpus.begin(), gpus.end()});
  devices_ = std::make_unique<CudaDevices>();
  for (int d = 0; d < static_cast<int>(gpu_of_device.size()); ++d) {
    devices_->devices.push_back(std::make_unique<VirtualDevice>(
        d, gpu_of_device[static_cast<size_t>(d)], precision, *control_));
    devices_->devices.back()->context->set_mixed_bf16(experiment_.training.precision ==
                                                      Precision::Bf16Mixed);
    devices_->devices.back()->allocator().set_listener([this, d](const MemoryBytes& bytes) {
      sink_.add_memory({d, clock_.now(), bytes});
    });
  }
  devices_->comm_world = std::make_unique<CommWorld>(std::vector<int>(gpus.begin(), gpus.end()));
  devices_->routes = std::make_unique<MessageRoutes>(
      devices_->devices, message_links(program_->schedule()), *devices_->comm_world);
}

void CudaExecutor::build_groups() {
  CudaDevices& cuda = *devices_;
  const size_t devices = cuda.devices.size();
  cuda.data_parallel_group_of.assign(devices, nullptr);
  cuda.tensor_parallel_group_of.assign(devices, nullptr);
  auto make_group = [&](const std::vector<int>& members, std::vector<DeviceAllReduce*>& group_of) {
    std::vector<VirtualDevice*> member_devices;
    for (int member : members)
      member_devices.push_back(cuda.devices[static_cast<size_t>(member)].get());
    cuda.groups.push_back(
        std::make_unique<DeviceAllReduce>(member_devices, *control_, *cuda.comm_world));
    for (int member : members) group_of[static_cast<size_t>(member)] = cuda.groups.back().get();
  };
  const CollectiveGroups groups = collective_groups(experiment_.parallel);
  for (const std::vector<int>& members : groups.data_parallel)
    make_group(members, cuda.data_parallel_group_of);
  for (const std::vector<int>& members : groups.tensor_parallel)
    make_group(members, cuda.tensor_parallel_group_of);
}

void CudaExecutor::after_failure() {
  // A fault on one GPU leaves NCCL kernels on the others waiting for it:
  // abort the communicators so their workers' waits return.
  if (devices_ && devices_->comm_world) devices_->comm_world->abort();
}

CudaExecutor::~CudaExecutor() { stop_and_join(); }

}  // namespace pipelab::gpu
