// PipelineExecutor: a training run whose every virtual device is a
// DeviceWorker<Backend> on its own host thread. The run life cycle and its
// preparation are ThreadedExecutor's; the loop is DeviceWorker's; this class
// adds what ties them to a backend, once for every backend: the devices the
// backend shares (Backend::Devices), one worker per device, the parameter
// servers of async data parallelism and the evaluation after a step, both on
// the host views of replica 0's stages.
//
// A subclass (CpuExecutor, gpu/'s CudaExecutor) calls prepare_run(), makes
// devices_, then build_workers(), and calls stop_and_join() in its destructor.
// devices_ is declared before workers_, so the workers (and the memory they
// hold) go first.
//
// Across processes (pipelab-cli under mpirun) every backend uses the same
// host-side machinery: Backend::Devices provides transport() (reaching any
// device's host mailbox, other ranks' over MPI), host_mailbox(device) and
// host_mailboxes() for the devices this process runs, and set_server_inbox
// (where other ranks' requests for this rank's parameter servers arrive);
// the evaluation weights and async data parallelism's pushes and pulls
// (remote_parameter_server.h) travel on them.
#pragma once

#include <map>
#include <memory>
#include <stdexcept>
#include <utility>
#include <vector>

#include "core/runtime/device_worker.h"
#include "core/runtime/evaluation_weights.h"
#include "core/comm/message_tag.h"
#include "core/runtime/remote_parameter_server.h"
#include "core/runtime/threaded_executor.h"

namespace pipelab {

template <typename Backend>
class PipelineExecutor : public ThreadedExecutor {
 public:
  using Worker = DeviceWorker<Backend>;
  using Devices = typename Backend::Devices;

  // For tests and tools: a device this process runs.
  Worker& worker(int device) { return *workers_[static_cast<size_t>(device - first_hosted_device())]; }

 protected:
  using ThreadedExecutor::ThreadedExecutor;

  // One worker per virtual device this process runs (std::invalid_argument
  // when a stage cannot be built), then the parameter servers under async
  // data parallelism. Across processes, devices_ must have its transport.
  void build_workers() {
    shared_ = make_worker_shared([this](int step) { evaluate_after(step); });
    for (int device = first_hosted_device(); device < first_hosted_device() + hosted_device_count(); ++device)
      workers_.push_back(std::make_unique<Worker>(*shared_, *devices_, device));
    const ParallelPlan& plan = experiment_.parallel;
    if (plan.update == UpdateMode::Async && plan.dp > 1) make_parameter_servers();
    if (options_.process)
      devices_->set_server_inbox([this](int to, const MessageTag& tag, const float* values,
                                        int64_t count) { serve_remote_replica(to, tag, values, count); });
  }

  void run_worker(int device) override { worker(device).run(); }

  void release_in_flight() override {
    for (auto& worker : workers_) worker->drop_in_flight();
    devices_->release_in_flight();
  }

  std::unique_ptr<Devices> devices_;  // made by the subclass before build_workers
  std::unique_ptr<WorkerShared> shared_;
  std::vector<std::unique_ptr<Worker>> workers_;

 private:
  // A request from another rank's replica (remote_parameter_server.h) for a
  // server this rank holds, on the thread that delivers it.
  void serve_remote_replica(int to, const MessageTag& tag, const float* values, int64_t count) {
    const ParallelPlan& plan = experiment_.parallel;
    const DeviceLayout layout = plan.layout();
    const bool fits =
        tag.stage >= 0 && tag.stage < plan.stages() && tag.sender >= 0 &&
        tag.sender < device_count() && !servers_.empty() &&
        to == layout.device_of(0, layout.rank_of_stage(tag.stage), layout.coord_of(to).shard);
    ParameterServer* server =
        fits ? dynamic_cast<ParameterServer*>(
                   servers_[tag.stage * plan.tp + layout.coord_of(to).shard].get())
             : nullptr;
    if (!server)
      throw std::runtime_error("device " + std::to_string(tag.sender) + " asked device " +
                               std::to_string(to) + " for stage " + std::to_string(tag.stage) +
                               "'s parameter server, which this rank does not hold");
    serve_parameter_server_request(*server, to, layout.coord_of(tag.sender).replica, tag, values,
                                   count, devices_->transport());
  }

  // A run over processes evaluates on rank 0 (the only one with an
  // evaluator): the other ranks post the weights of their replica-0 stage
  // shards (and under expert parallelism those of the rest of replica 0's
  // expert-parallel group) to rank 0's device 0 at each evaluated step, and
  // rank 0 copies them into the evaluator.
  void send_for_evaluation(int device, int stage, int step, Sequential& weights) {
    const std::vector<float> values = flat_evaluation_weights(weights);
    devices_->transport().post(0, MessageTag::evaluation_weights(device, stage, step),
                               values.data(), 1, static_cast<int64_t>(values.size()));
  }

  void copy_remote_weights(int step) {
    const ParallelPlan& plan = experiment_.parallel;
    const DeviceLayout layout = plan.layout();
    for (int device = 0; device < device_count(); ++device) {
      const DeviceCoord coord = layout.coord_of(device);
      // Replica 0, and under expert parallelism the rest of its group (evaluate_after).
      if (hosts(device) || coord.replica >= plan.ep || coord.context != 0) continue;
      const ExpertShard experts = expert_shard(plan, coord.replica);
      for (int chunk = 0; chunk < plan.chunks; ++chunk) {
        const int stage = layout.stage_of(coord.pipeline_rank, chunk);
        std::unique_ptr<Sequential>& copy = remote_stages_[{device, chunk}];
        if (!copy)
          copy = stage_copy_for_evaluation(experiment_, stage_ranges_, tp_roles_, stage,
                                           coord.shard, experts);
        const auto message =
            devices_->host_mailbox(0).receive(MessageTag::evaluation_weights(device, stage, step));
        set_evaluation_weights(*copy, message.data(), message.size());
        evaluator_->copy_weights_from(*copy, plan.tp, coord.shard, experts);
      }
    }
  }

  // One server per stage shard, starting from replica 0's (seeded) weights,
  // in the process that runs replica 0; every other process with a replica of
  // the shard gets a stand-in that reaches it.
  void make_parameter_servers() {
    const ParallelPlan& plan = experiment_.parallel;
    const DeviceLayout layout = plan.layout();
    servers_.resize(static_cast<size_t>(plan.stages()) * plan.tp);
    for (auto& replica : workers_)
      for (int chunk = 0; chunk < replica->chunk_count(); ++chunk) {
        const int stage = replica->stage_index(chunk);
        std::unique_ptr<WeightServer>& server = servers_[stage * plan.tp + replica->shard()];
        if (server) continue;
        // Replica 0's device of this stage shard (the same chunk there).
        const int home = layout.device_of(0, layout.rank_of_stage(stage), replica->shard());
        if (hosts(home))
          server = std::make_unique<ParameterServer>(
              worker(home).host_weights(chunk).parameters(),
              optimizer_settings(experiment_.training.optimizer), plan.dp, *control_);
        else
          // Another rank holds it: this rank's replicas reach it through the transport.
          server = std::make_unique<RemoteParameterServer>(home, stage, devices_->transport(),
                                                           devices_->host_mailboxes());
      }
  }

  // Run by the last worker to reach the step's meeting point: replica 0's
  // weights (and its expert-parallel group's experts) into the evaluator's
  // whole model, then the validation set.
  void evaluate_after(int step) {
    const ParallelPlan& plan = experiment_.parallel;
    for (auto& worker : workers_) {
      // Replica 0, and under expert parallelism the rest of its group for
      // their experts; context rank 0 (every context rank holds the same weights).
      if (worker->replica() >= plan.ep || worker->context() != 0) continue;
      for (int chunk = 0; chunk < worker->chunk_count(); ++chunk) {
        Sequential& weights = worker->host_weights(chunk);
        if (evaluator_)
          evaluator_->copy_weights_from(weights, plan.tp, worker->shard(),
                                        expert_shard(plan, worker->replica()));
        else
          send_for_evaluation(worker->device(), worker->stage_index(chunk), step, weights);
      }
    }
    if (!evaluator_) return;  // rank 0 of a run over processes evaluates
    copy_remote_weights(step);
    recorder_->validation(step, evaluator_->evaluate());
  }

  // Rank 0 of a run over processes: copies of the replica-0 (ep group) stage
  // shards other ranks run, by (device, chunk), made at the first evaluation.
  std::map<std::pair<int, int>, std::unique_ptr<Sequential>> remote_stages_;
};

}  // namespace pipelab
