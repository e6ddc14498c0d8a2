// ThreadedExecutor: the run life cycle shared by the executors that give every
// virtual device of the dp x tp x pp grid its own host thread (CpuExecutor
// here, CudaExecutor in gpu/, both through PipelineExecutor). It owns the
// RunControl the workers check between ops, the worker threads, the state
// machine (Ready -> Running -> Finished, Stopped or Failed; Paused while every
// worker waits on a hold) and the first error, and implements start, pause,
// resume, step, stop and wait on them. It also prepares what every training
// run needs whatever its devices (prepare_run: the data, the stages, the
// lowered program, the recorder, evaluation). A subclass builds its devices
// and workers in its constructor, and says how one device's worker runs and
// what to free once every worker has been joined.
#pragma once

#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/io/experiment.h"
#include "core/plan/partition.h"
#include "core/plan/stage_profile.h"
#include "core/runtime/device_worker.h"
#include "core/runtime/evaluation.h"
#include "core/runtime/executor.h"
#include "core/runtime/parameter_server.h"
#include "core/comm/rendezvous.h"
#include "core/runtime/run_clock.h"
#include "core/comm/run_control.h"
#include "core/runtime/run_recorder.h"
#include "core/runtime/training_data.h"
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
  void abort(const std::string& message) override { fail(message); }
  RunState state() const override;
  std::string error() const override;
  int steps_done() const override;
  int steps_total() const override;

  // For tests and tools.
  int device_count() const { return experiment_.parallel.devices(); }
  const TrainingProgram& program() const { return *program_; }
  const std::vector<StageProfile>& stage_profiles() const { return profiles_; }
  // The recorder making this run's stream (on rank 0 of a multi-process run
  // it also takes the other ranks' reports), and its clock.
  RunRecorder& recorder() { return *recorder_; }
  const RunClock& clock() const { return clock_; }
  // The devices this process runs: all, or its ProcessShare's block.
  int first_hosted_device() const { return first_hosted_; }
  int hosted_device_count() const { return hosted_count_; }
  bool hosts(int device) const {
    return device >= first_hosted_ && device < first_hosted_ + hosted_count_;
  }

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
  // Called once the first error is recorded and every worker told to stop,
  // from the failing thread: whatever may keep other workers waiting on the
  // device is released here (CUDA: NCCL communicators are aborted).
  virtual void after_failure() {}

  // Loads the data (DataError), splits the model and lowers the schedule
  // (ExperimentError), and makes the recorder, the evaluation meetings and,
  // with a validation set, the evaluator.
  void prepare_run();
  // Where this process's workers report: the recorder, or the ProcessShare's reporter.
  RunReporter& reporter();
  // The WorkerShared of this run; `at_meeting_point` evaluates after a step.
  std::unique_ptr<WorkerShared> make_worker_shared(std::function<void(int step)> at_meeting_point);

  void stop_and_join();
  // Records the run's first error and stops every worker (the run ends Failed).
  void fail(const std::string& message);

  Experiment experiment_;
  EventSink& sink_;
  ExecutorOptions options_;
  int total_steps_ = 0;
  int first_hosted_ = 0;
  int hosted_count_ = 0;
  RunClock clock_;
  // The members below outlive everything a subclass declares (a base's
  // members are destroyed last), so its devices and workers may refer to them.
  std::unique_ptr<RunControl> control_;
  std::unique_ptr<TrainingProgram> program_;  // set by prepare_run
  std::unique_ptr<RunRecorder> recorder_;     // set by prepare_run
  // Set by prepare_run:
  std::unique_ptr<TrainingData> data_;
  std::vector<StageProfile> profiles_;
  std::vector<LayerRange> stage_ranges_;       // per pipeline stage
  std::vector<TensorParallelRole> tp_roles_;  // per model layer
  EvaluatedSteps evaluated_steps_;
  std::unique_ptr<Rendezvous> rendezvous_;
  std::unique_ptr<Evaluator> evaluator_;  // null without a validation set, and on ranks other than 0
  // Async data parallelism: one server per (stage, shard), at stage * tp +
  // shard; over processes, the ones other ranks hold are RemoteParameterServers.
  std::vector<std::unique_ptr<WeightServer>> servers_;

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
