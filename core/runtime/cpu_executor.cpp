#include "core/runtime/cpu_executor.h"

#include <stdexcept>

#include "core/io/experiment_io.h"
#include "core/nn/blas_threads.h"
#include "core/runtime/device_worker_impl.h"
#include "core/runtime/host_memory_check.h"
#include "core/runtime/process_share.h"

namespace pipelab {

template class DeviceWorker<CpuBackend>;
template class PipelineExecutor<CpuBackend>;

CpuExecutor::CpuExecutor(const Experiment& experiment, EventSink& sink,
                         const ExecutorOptions& options)
    : PipelineExecutor(experiment, sink, options) {
  const int devices = experiment_.parallel.devices();
  set_blas_threads(1);  // one core per device thread: timings mean something

  // Before anything is generated or allocated: a run that cannot fit is refused
  // with the numbers instead of thrashing or being killed.
  check_host_memory_for_run(experiment_, options.prediction.device_peak_bytes);
  prepare_run();

  devices_ = std::make_unique<CpuDevices>();
  devices_->allocators.resize(static_cast<size_t>(devices));
  devices_->mailboxes.resize(static_cast<size_t>(devices));
  for (int d = first_hosted_device(); d < first_hosted_device() + hosted_device_count(); ++d) {
    devices_->allocators[d] = std::make_unique<DeviceAllocator>(d);
    devices_->allocators[d]->set_listener([this, d](const MemoryBytes& bytes) {
      reporter().memory({d, clock_.now(), bytes});
    });
    devices_->mailboxes[d] = std::make_unique<Mailbox>(d, *devices_->allocators[d], *control_);
  }
  devices_->connect(options.process ? options.process->make_transport : nullptr);
  try {
    build_workers();
  } catch (const std::invalid_argument& error) {
    throw ExperimentError(error.what());
  }

  if (experiment_.backend.threads > 0 && experiment_.backend.threads != devices)
    sink_.add_message("backend.threads = " + std::to_string(experiment_.backend.threads) +
                      " is ignored: the CPU backend runs one thread per virtual device (" +
                      std::to_string(devices) + ")");
}

CpuExecutor::~CpuExecutor() { stop_and_join(); }

std::string CpuExecutor::launch_message() const {
  const ParallelPlan& plan = experiment_.parallel;
  return "cpu backend: " + std::to_string(device_count()) + " device threads (dp " +
         std::to_string(plan.dp) + " x tp " + std::to_string(plan.tp) + " x pp " +
         std::to_string(plan.pp) + "), schedule " + schedule_name(plan.schedule) + ", " +
         std::to_string(total_steps_) + " steps of " +
         std::to_string(experiment_.training.batch_size) + " samples";
}

}  // namespace pipelab
