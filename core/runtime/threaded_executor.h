// ThreadedExecutor: the run life cycle shared by the executors that give every
// virtual device of the dp x tp x pp grid its own host thread (CpuExecutor
// here, CudaExecutor in gpu/). It owns the RunControl the workers check
// between ops, the worker threads, the state machine (Ready -> Running ->
// Finished, Stopped or Failed; Paused while every worker waits on a hold) and
// the first error, and implements start, pause, resume, step, stop and wait on
// them. A subclass builds its devices, program, recorder and workers in its
// constructor, and says how one device's worker runs and what to free once
// every worker has been joined.
#pragma once

#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/io/experiment.h"
#include "core/runtime/executor.h"
#include "core/runtime/run_clock.h"
#include "core/runtime/run_control.h"
#include "core/runtime/run_recorder.h"
#include "core/runtime/training_program.h"
#include "core/trace/event_sink.h"

namespace pipelab {

class ThreadedExecutor : public Executor {
 public:
  void start() override;
  void pause() override;
  void resume() override;
  void step() override;
  void stop() override;
  // Returns at once when the run was never started.
  void wait() override;
  RunState state() const override;
  std::string error() const override;
  int steps_done() const override;
  int steps_total() const override;

  // For tests and tools.
  int device_count() const { return experiment_.parallel.devices(); }
  const TrainingProgram& program() const { return *program_; }

 protected:
  // Checks the experiment (ExperimentError), counts the steps to run and
  // makes the RunControl for every device.
  ThreadedExecutor(const Experiment& experiment, EventSink& sink, const ExecutorOptions& options);
  // Subclasses call stop_and_join() in their destructor: the workers use their
  // members. Here every thread is joined already.
  ~ThreadedExecutor() override = default;

  // The body of device `device`'s thread: runs its op list to the end (or
  // until the RunControl stops it).
  virtual void run_worker(int device) = 0;
  // Called with no worker running: frees what in-flight micro-batches and
  // undelivered messages hold, so memory is back to weights, gradients and
  // optimizer state.
  virtual void release_in_flight() = 0;
  // The message that announces the run when it launches.
  virtual std::string launch_message() const = 0;

  void stop_and_join();
  // Records the run's first error and stops every worker (the run ends Failed).
  void fail(const std::string& message);

  Experiment experiment_;
  EventSink& sink_;
  ExecutorOptions options_;
  int total_steps_ = 0;
  RunClock clock_;
  // The members below outlive everything a subclass declares (a base's
  // members are destroyed last), so its devices and workers may refer to them.
  std::unique_ptr<RunControl> control_;
  std::unique_ptr<TrainingProgram> program_;  // set by the subclass's constructor
  std::unique_ptr<RunRecorder> recorder_;     // set by the subclass's constructor

 private:
  void launch_locked();
  void worker_exited();
  void join_and_release();
  bool terminal_locked() const;

  mutable std::mutex state_mutex_;
  std::condition_variable state_changed_;
  RunState state_ = RunState::Ready;
  std::string error_;
  int workers_exited_ = 0;

  std::mutex join_mutex_;
  std::vector<std::thread> threads_;
};

}  // namespace pipelab
