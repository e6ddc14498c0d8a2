#include "core/runtime/threaded_executor.h"

#include "core/io/experiment_io.h"
#include "core/runtime/run_settings.h"

namespace pipelab {

ThreadedExecutor::ThreadedExecutor(const Experiment& experiment, EventSink& sink,
                                   const ExecutorOptions& options)
    : experiment_(experiment), sink_(sink), options_(options) {
  check_experiment(experiment_);
  total_steps_ = run_steps(experiment_, options_);
  control_ = std::make_unique<RunControl>(experiment_.parallel.devices());
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
  for (int device = 0; device < device_count(); ++device)
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
  if (++workers_exited_ < device_count()) return;
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
