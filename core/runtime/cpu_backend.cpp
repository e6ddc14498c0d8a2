#include "core/runtime/cpu_backend.h"

#include <algorithm>
#include <cassert>
#include <cstring>
#include <span>

#include "core/comm/all_to_all.h"
#include "core/runtime/microbatch_loss.h"
#include "core/runtime/vocab_parallel_loss.h"

namespace pipelab {
namespace {

// The ring of `members` devices that device `place` belongs to, over the run's transport.
template <typename DeviceOfMember>
RingGroup make_ring(CpuDevices& devices, MessageKind kind, int members, int rank,
                    DeviceOfMember device_of_member) {
  RingGroup group;
  group.kind = kind;
  group.rank = rank;
  for (int member = 0; member < members; ++member) group.devices.push_back(device_of_member(member));
  group.transport = &devices.transport();
  group.mailbox = devices.mailboxes[group.devices[rank]].get();
  return group;
}

}  // namespace

void CpuDevices::connect(const std::function<std::unique_ptr<Transport>(InProcessTransport&)>& wrap) {
  std::vector<Mailbox*> by_device;
  for (auto& mailbox : mailboxes) by_device.push_back(mailbox.get());
  in_process = std::make_unique<InProcessTransport>(std::move(by_device));
  if (wrap) across_processes = wrap(*in_process);
}

void CpuDevices::release_in_flight() {
  for (auto& mailbox : mailboxes)
    if (mailbox) mailbox->clear();
}

CpuBackend::CpuBackend(CpuDevices& devices, WorkerShared& shared, const WorkerPlace& place)
    : devices_(devices), shared_(shared), place_(place) {
  const ParallelPlan& plan = shared_.experiment.parallel;
  tensor_parallel_group_ =
      make_ring(devices_, MessageKind::TensorParallelChunk, plan.tp, place_.shard, [&](int member) {
        return device_id(plan, {place_.replica, place_.rank, member, place_.context});
      });
  // Over the replicas and their context ranks (WorkerPlace::data_parallel_rank).
  data_parallel_group_ = make_ring(
      devices_, MessageKind::DataParallelChunk, plan.data_parallel_size(),
      place_.data_parallel_rank(plan.cp), [&](int member) {
        return device_id(plan, {member / plan.cp, place_.rank, place_.shard, member % plan.cp});
      });
  context_parallel_group_ = make_ring(
      devices_, MessageKind::ContextParallelChunk, plan.cp, place_.context, [&](int member) {
        return device_id(plan, {place_.replica, place_.rank, place_.shard, member});
      });
  const ExpertShard experts = expert_shard(plan, place_.replica);
  const int first_of_group = place_.replica - experts.rank;
  expert_parallel_group_ =
      make_ring(devices_, MessageKind::ExpertParallelChunk, plan.ep, experts.rank, [&](int member) {
        return device_id(plan,
                         {first_of_group + member, place_.rank, place_.shard, place_.context});
      });
  expert_data_parallel_group_ = make_ring(
      devices_, MessageKind::ExpertDataParallelChunk, plan.dp / plan.ep, place_.replica / plan.ep,
      [&](int member) {
        return device_id(
            plan, {member * plan.ep + experts.rank, place_.rank, place_.shard, place_.context});
      });
}

std::unique_ptr<Sequential> CpuBackend::make_stack(const LayerRange& range,
                                                   TensorParallelSetup tensor_parallel,
                                                   const Sequential::BuiltLayer& built) {
  const Experiment& experiment = shared_.experiment;
  auto stack = std::make_unique<Sequential>(
      experiment.model, range.begin, range.end, experiment.seed, &allocator(),
      std::move(tensor_parallel), experiment.parallel.selective_recompute,
      expert_shard(experiment.parallel, place_.replica), built);
  const ParallelPlan& plan = experiment.parallel;
  if (plan.recompute && plan.recompute_blocks)
    stack->recompute_blocks_in_groups(plan.recompute_layers);
  return stack;
}

std::unique_ptr<Optimizer> CpuBackend::make_optimizer(const OptimizerSettings& settings,
                                                      std::vector<Parameter> parameters) {
  return pipelab::make_optimizer(settings, std::move(parameters));
}

std::string CpuBackend::failure_message(const std::exception& error) const {
  return "device " + std::to_string(place_.device) + ": " + error.what();
}

void CpuBackend::begin(const Op&) { open_begins_.push_back(shared_.clock.now()); }

void CpuBackend::end(const Op& op, int64_t bytes) {
  assert(!open_begins_.empty());
  TraceEvent event;
  event.device = place_.device;
  event.op = op;
  event.t_begin = open_begins_.back();
  event.t_end = shared_.clock.now();
  event.bytes = bytes;
  open_begins_.pop_back();
  shared_.recorder.event(event);
}

Tensor CpuBackend::stage_input(const Op& op) {
  return shared_.data.inputs(op.step, place_.replica, op.microbatch, &allocator(), place_.context);
}

Tensor CpuBackend::loss_gradient(const Op& op, const Tensor& output,
                                 const std::function<void(Tensor&)>& tensor_parallel_sum) {
  TrainingData& data = shared_.data;
  const MicrobatchTargets targets =
      data.targets(op.step, place_.replica, op.microbatch, place_.context);
  const double scale = data.gradient_scale(op.step);
  const std::optional<VocabRange> shard = logits_shard(shared_.experiment, shared_.tp_roles, place_.shard);
  LossResult loss =
      shard ? vocab_parallel_token_loss(output, targets, scale, true, *shard,
                                        shared_.experiment.parallel.tp, place_.shard,
                                        [&tensor_parallel_sum](float* values, int64_t count) {
                                          Tensor buffer = Tensor::borrow(values, count);
                                          tensor_parallel_sum(buffer);
                                        })
            : output_loss(data.loss(), output, targets, scale, true);
  // Every shard computes the same loss; one reports it (each context rank its positions' part).
  if (place_.shard == 0)
    shared_.recorder.loss(op.step, place_.data_parallel_rank(shared_.experiment.parallel.cp),
                          op.microbatch, loss);
  return std::move(loss.grad);
}

int64_t CpuBackend::send(const Op& op, const MessageTag& tag, Tensor message) {
  begin(op);
  devices_.transport().post(op.peer, tag, message);
  end(op, message.bytes());
  return message.bytes();
}

Tensor CpuBackend::receive(const Op& op, const MessageTag& tag) {
  begin(op);
  Tensor message = devices_.mailboxes[place_.device]->receive(tag);
  end(op, message.bytes());
  return message;
}

Tensor CpuBackend::gather_gradients(const std::vector<Parameter>& parameters, int64_t padded_count) {
  int64_t count = 0;
  for (const Parameter& parameter : parameters) count += parameter.grad->size();
  Tensor flat(1, std::max(count, padded_count), &allocator(), MemoryCategory::Workspace);
  int64_t offset = 0;
  for (const Parameter& parameter : parameters) {
    std::memcpy(flat.data() + offset, parameter.grad->data(),
                static_cast<size_t>(parameter.grad->size()) * sizeof(float));
    offset += parameter.grad->size();
  }
  return flat;
}

void CpuBackend::scatter_gradients(const Tensor& flat, const std::vector<Parameter>& parameters) {
  int64_t offset = 0;
  for (const Parameter& parameter : parameters) {
    std::memcpy(parameter.grad->data(), flat.data() + offset,
                static_cast<size_t>(parameter.grad->size()) * sizeof(float));
    offset += parameter.grad->size();
  }
}

Tensor CpuBackend::zeros(int64_t rows, int64_t cols, MemoryCategory category) {
  return Tensor(rows, cols, &allocator(), category);
}

void CpuBackend::copy_values(const Tensor& from, int64_t from_offset, Tensor& to, int64_t to_offset,
                             int64_t count) {
  std::memcpy(to.data() + to_offset, from.data() + from_offset, static_cast<size_t>(count) * sizeof(float));
}

void CpuBackend::add_values(const Tensor& from, int64_t from_offset, Tensor& to, int64_t to_offset,
                            int64_t count) {
  const float* source = from.data() + from_offset;
  float* target = to.data() + to_offset;
  for (int64_t i = 0; i < count; ++i) target[i] += source[i];
}

void CpuBackend::data_parallel_reduce_scatter(Tensor& flat, bool experts) {
  const std::span<float> values(flat.data(), static_cast<size_t>(flat.size()));
  if (experts)
    ring_reduce_scatter(values, expert_data_parallel_group_, expert_data_parallel_collectives_++);
  else
    ring_reduce_scatter(values, data_parallel_group_, data_parallel_collectives_++);
}

void CpuBackend::data_parallel_all_gather(Tensor& flat, bool experts) {
  const std::span<float> values(flat.data(), static_cast<size_t>(flat.size()));
  if (experts)
    ring_all_gather(values, expert_data_parallel_group_, expert_data_parallel_collectives_++);
  else
    ring_all_gather(values, data_parallel_group_, data_parallel_collectives_++);
}

void CpuBackend::data_parallel_all_reduce(Tensor& flat) {
  ring_all_reduce(std::span<float>(flat.data(), static_cast<size_t>(flat.size())),
                  data_parallel_group_, data_parallel_collectives_++);
}

void CpuBackend::data_parallel_all_reduce(std::vector<float>& values) {
  ring_all_reduce(std::span<float>(values), data_parallel_group_, data_parallel_collectives_++);
}

void CpuBackend::expert_all_to_all(Tensor& values) {
  all_to_all(std::span<float>(values.data(), static_cast<size_t>(values.size())), expert_parallel_group_,
             expert_parallel_collectives_++);
}

void CpuBackend::expert_data_parallel_all_reduce(Tensor& flat) {
  ring_all_reduce(std::span<float>(flat.data(), static_cast<size_t>(flat.size())), expert_data_parallel_group_,
                  expert_data_parallel_collectives_++);
}

void CpuBackend::tensor_parallel_all_reduce(Tensor& values) {
  ring_all_reduce(std::span<float>(values.data(), static_cast<size_t>(values.size())),
                  tensor_parallel_group_, tensor_parallel_collectives_++);
}

void CpuBackend::tensor_parallel_reduce_scatter(Tensor& values) {
  ring_reduce_scatter(std::span<float>(values.data(), static_cast<size_t>(values.size())),
                      tensor_parallel_group_, tensor_parallel_collectives_++);
}

void CpuBackend::tensor_parallel_all_gather(Tensor& values) {
  ring_all_gather(std::span<float>(values.data(), static_cast<size_t>(values.size())),
                  tensor_parallel_group_, tensor_parallel_collectives_++);
}

void CpuBackend::context_parallel_reduce_scatter(Tensor& values) {
  ring_reduce_scatter(std::span<float>(values.data(), static_cast<size_t>(values.size())),
                      context_parallel_group_, context_parallel_collectives_++);
}

void CpuBackend::context_parallel_all_gather(Tensor& values, const SliceArrival& arrived) {
  ring_all_gather_passing(std::span<float>(values.data(), static_cast<size_t>(values.size())),
                          context_parallel_group_, context_parallel_collectives_++, arrived);
}

}  // namespace pipelab
