#include "core/runtime/threaded_executor.h"

#include <cassert>
#include <stdexcept>

#include "core/io/experiment_io.h"
#include "core/runtime/process_share.h"
#include "core/runtime/run_settings.h"
#include "core/runtime/trainable.h"

namespace pipelab {

ThreadedExecutor::ThreadedExecutor(const Experiment& experiment, EventSink& sink,
                                   const ExecutorOptions& options)
    : experiment_(experiment), sink_(sink), options_(options) {
  check_experiment(experiment_);
  check_trainable(experiment_);
  total_steps_ = run_steps(experiment_, options_);
  hosted_count_ = experiment_.parallel.devices();
  if (const ProcessShare* share = options_.process) {
    assert(share->first_device >= 0 && share->first_device + share->device_count <= hosted_count_);
    first_hosted_ = share->first_device;
    hosted_count_ = share->device_count;
  }
  control_ = std::make_unique<RunControl>(experiment_.parallel.devices());
}

RunReporter& ThreadedExecutor::reporter() {
  if (options_.process && options_.process->reporter) return *options_.process->reporter;
  return *recorder_;
}

void ThreadedExecutor::prepare_run() {
  const ParallelPlan& plan = experiment_.parallel;
  data_ = std::make_unique<TrainingData>(experiment_);  // DataError propagates
  try {
    profiles_ = profile_stages(experiment_.model, plan, microbatch_size(experiment_),
                               experiment_.training.precision);
    for (const StageProfile& profile : profiles_) stage_ranges_.push_back(profile.layers);
    tp_roles_ = tensor_parallel_roles(experiment_.model, stage_ranges_);
    program_ = std::make_unique<TrainingProgram>(plan, profiles_, total_steps_);
  } catch (const std::invalid_argument& error) {
    throw ExperimentError(error.what());
  }
  const RecorderSettings settings = recorder_settings(experiment_, *data_, total_steps_,
                                                      options_.prediction.bubble);
  evaluated_steps_ = settings.evaluated_steps;
  recorder_ = std::make_unique<RunRecorder>(sink_, clock_, settings,
                                            [this](const std::string& message) { fail(message); });
  rendezvous_ = std::make_unique<Rendezvous>(hosted_count_, *control_);
  // Across processes, rank 0 evaluates (pipeline_executor.h).
  const bool evaluates_here = !options_.process || options_.process->rank == 0;
  if (data_->validation().samples > 0 && evaluates_here)
    evaluator_ =
        std::make_unique<Evaluator>(experiment_.model, experiment_.seed, data_->validation());
}

std::unique_ptr<WorkerShared> ThreadedExecutor::make_worker_shared(
    std::function<void(int step)> at_meeting_point) {
  return std::make_unique<WorkerShared>(WorkerShared{
      experiment_, *program_, stage_ranges_, tp_roles_, clock_, *control_, *data_, reporter(),
      servers_, *rendezvous_, evaluated_steps_, std::move(at_meeting_point),
      [this](const std::string& message) { fail(message); }});
}

void ThreadedExecutor::stop_and_join() {
  control_->stop();
  join_and_release();
}

bool ThreadedExecutor::terminal_locked() const {
  return state_ == RunState::Finished || state_ == RunState::Stopped || state_ == RunState::Failed;
}

void ThreadedExecutor::launch_locked() {
  clock_.start();
  state_ = RunState::Running;
  sink_.add_message(launch_message());
  std::lock_guard<std::mutex> join_lock(join_mutex_);
  // Devices other processes run are done as far as this one's control goes.
  for (int device = 0; device < device_count(); ++device)
    if (!hosts(device)) control_->worker_done(device);
  for (int device = first_hosted_; device < first_hosted_ + hosted_count_; ++device)
    threads_.emplace_back([this, device] {
      run_worker(device);
      worker_exited();
    });
}

void ThreadedExecutor::start() {
  std::lock_guard<std::mutex> lock(state_mutex_);
  if (state_ != RunState::Ready) return;
  if (options_.start_paused) control_->hold();
  launch_locked();
}

void ThreadedExecutor::pause() {
  std::lock_guard<std::mutex> lock(state_mutex_);
  if (state_ == RunState::Running) control_->hold();
}

void ThreadedExecutor::resume() {
  std::lock_guard<std::mutex> lock(state_mutex_);
  if (state_ == RunState::Running) control_->release();
}

void ThreadedExecutor::step() {
  std::lock_guard<std::mutex> lock(state_mutex_);
  if (terminal_locked()) return;
  const int next = recorder_->steps_done();
  if (next >= total_steps_)
    control_->release();
  else
    control_->hold_at(program_->positions_after_step(next));
  if (state_ == RunState::Ready) launch_locked();
}

void ThreadedExecutor::stop() {
  stop_and_join();
  std::lock_guard<std::mutex> lock(state_mutex_);
  if (!terminal_locked()) {
    state_ = RunState::Stopped;
    state_changed_.notify_all();
  }
}

void ThreadedExecutor::wait() {
  {
    std::unique_lock<std::mutex> lock(state_mutex_);
    if (state_ == RunState::Ready) return;
    state_changed_.wait(lock, [&] { return terminal_locked(); });
  }
  join_and_release();
}

void ThreadedExecutor::join_and_release() {
  std::lock_guard<std::mutex> lock(join_mutex_);
  for (std::thread& thread : threads_)
    if (thread.joinable()) thread.join();
  // Nothing runs now (a finished run holds nothing in flight anyway).
  release_in_flight();
}

void ThreadedExecutor::worker_exited() {
  std::lock_guard<std::mutex> lock(state_mutex_);
  if (++workers_exited_ < hosted_count_) return;
  if (!error_.empty()) {
    state_ = RunState::Failed;
  } else if (control_->stopping()) {
    state_ = RunState::Stopped;
    sink_.add_message("stopped after " + std::to_string(recorder_->steps_done()) + " of " +
                      std::to_string(total_steps_) + " steps");
  } else {
    state_ = RunState::Finished;
    sink_.add_message("finished " + std::to_string(total_steps_) + " steps in " +
                      seconds_text(clock_.now()));
  }
  state_changed_.notify_all();
}

void ThreadedExecutor::fail(const std::string& message) {
  {
    std::lock_guard<std::mutex> lock(state_mutex_);
    if (!error_.empty() || terminal_locked()) return;
    error_ = message;
  }
  sink_.add_message("error: " + message);
  control_->stop();
  after_failure();
}

RunState ThreadedExecutor::state() const {
  std::lock_guard<std::mutex> lock(state_mutex_);
  if (state_ == RunState::Running && control_->holding() && control_->all_idle())
    return RunState::Paused;
  return state_;
}

std::string ThreadedExecutor::error() const {
  std::lock_guard<std::mutex> lock(state_mutex_);
  return error_;
}

int ThreadedExecutor::steps_done() const { return recorder_->steps_done(); }
int ThreadedExecutor::steps_total() const { return total_steps_; }

}  // namespace pipelab
