#include "core/runtime/cpu_executor.h"

#include <stdexcept>

#include "core/io/experiment_io.h"
#include "core/nn/blas_threads.h"
#include "core/runtime/host_memory_check.h"
#include "core/runtime/run_settings.h"

namespace pipelab {

CpuExecutor::CpuExecutor(const Experiment& experiment, EventSink& sink,
                         const ExecutorOptions& options)
    : ThreadedExecutor(experiment, sink, options) {
  const ParallelPlan& plan = experiment_.parallel;
  const int devices = plan.devices();
  set_blas_threads(1);  // one core per device thread: timings mean something

  // Before anything is generated or allocated: a run that cannot fit is refused
  // with the numbers instead of thrashing or being killed.
  check_host_memory_for_run(experiment_);
  data_ = std::make_unique<TrainingData>(experiment_);  // DataError propagates
  try {
    profiles_ = profile_stages(experiment_.model, plan, microbatch_size(experiment_));
    for (const StageProfile& profile : profiles_) stage_ranges_.push_back(profile.layers);
    tp_roles_ = tensor_parallel_roles(experiment_.model, stage_ranges_);
    program_ = std::make_unique<TrainingProgram>(plan, profiles_, total_steps_);
  } catch (const std::invalid_argument& error) {
    throw ExperimentError(error.what());
  }

  for (int d = 0; d < devices; ++d) {
    allocators_.push_back(std::make_unique<DeviceAllocator>(d));
    allocators_.back()->set_listener([this, d](const MemoryBytes& bytes) {
      sink_.add_memory({d, clock_.now(), bytes});
    });
  }
  for (int d = 0; d < devices; ++d)
    mailboxes_.push_back(std::make_unique<Mailbox>(d, *allocators_[d], *control_));

  const RecorderSettings settings = recorder_settings(experiment_, *data_, total_steps_);
  const bool validate = data_->validation().samples > 0;
  for (int step : settings.evaluated_steps)
    meeting_points_.push_back({step, program_->positions_after_step(step)});
  recorder_ = std::make_unique<RunRecorder>(sink_, clock_, settings,
                                            [this](const std::string& message) { fail(message); });
  rendezvous_ = std::make_unique<Rendezvous>(devices, *control_);

  shared_ = std::make_unique<WorkerShared>(
      WorkerShared{experiment_, *program_, stage_ranges_, tp_roles_, clock_, *control_, *data_,
                   *recorder_, allocators_, mailboxes_, servers_, *rendezvous_, meeting_points_,
                   [this](int step) { evaluate_after(step); },
                   [this](const std::string& message) { fail(message); }});
  try {
    for (int d = 0; d < devices; ++d)
      workers_.push_back(std::make_unique<DeviceWorker>(*shared_, d));
  } catch (const std::invalid_argument& error) {
    throw ExperimentError(error.what());
  }

  if (plan.update == UpdateMode::Async && plan.dp > 1) make_parameter_servers();
  if (validate)
    evaluator_ =
        std::make_unique<Evaluator>(experiment_.model, experiment_.seed, data_->validation());
  if (experiment_.backend.threads > 0 && experiment_.backend.threads != devices)
    sink_.add_message("backend.threads = " + std::to_string(experiment_.backend.threads) +
                      " is ignored: the CPU backend runs one thread per virtual device (" +
                      std::to_string(devices) + ")");
}

void CpuExecutor::make_parameter_servers() {
  // One server per stage shard, starting from replica 0's (seeded) weights.
  const ParallelPlan& plan = experiment_.parallel;
  servers_.resize(static_cast<size_t>(plan.stages()) * plan.tp);
  for (const auto& worker : workers_) {
    if (worker->replica() != 0) continue;
    for (int chunk = 0; chunk < worker->chunk_count(); ++chunk)
      servers_[worker->stage_index(chunk) * plan.tp + worker->shard()] =
          std::make_unique<ParameterServer>(worker->stage(chunk).parameters(),
                                            optimizer_settings(experiment_.training.optimizer),
                                            plan.dp, *control_);
  }
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

void CpuExecutor::run_worker(int device) { workers_[device]->run(); }

void CpuExecutor::release_in_flight() {
  for (auto& worker : workers_) worker->drop_in_flight();
  for (auto& mailbox : mailboxes_) mailbox->clear();
}

void CpuExecutor::evaluate_after(int step) {
  const int tp = experiment_.parallel.tp;
  for (auto& worker : workers_) {
    if (worker->replica() != 0) continue;
    for (int chunk = 0; chunk < worker->chunk_count(); ++chunk)
      evaluator_->copy_weights_from(worker->stage(chunk), tp, worker->shard());
  }
  recorder_->validation(step, evaluator_->evaluate());
}

}  // namespace pipelab
