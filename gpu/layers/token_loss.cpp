#include "gpu/layers/token_loss.h"

#include <cassert>
#include <stdexcept>
#include <string>
#include <vector>

#include "gpu/device/cuda_check.h"
#include "gpu/device/device_guard.h"
#include "gpu/kernels/token_loss.h"

namespace pipelab::gpu {
namespace {

// One int32 per position: its label when the mask keeps it, -1 when not (the
// kernels skip those rows). Checks the kept labels as the CPU loss does.
std::vector<int32_t> kept_labels(const MicrobatchTargets& targets, int64_t rows, int64_t vocab,
                                 int64_t& kept) {
  if (static_cast<int64_t>(targets.token_labels.size()) != rows ||
      (!targets.loss_mask.empty() && static_cast<int64_t>(targets.loss_mask.size()) != rows))
    throw std::invalid_argument("cross-entropy got " + std::to_string(targets.token_labels.size()) +
                                " labels (and a mask of " +
                                std::to_string(targets.loss_mask.size()) + ") for " +
                                std::to_string(rows) + " tokens; give one label per token");
  std::vector<int32_t> labels(static_cast<size_t>(rows));
  kept = 0;
  for (int64_t r = 0; r < rows; ++r) {
    const bool counted = targets.loss_mask.empty() || targets.loss_mask[r] != 0;
    const int32_t label = targets.token_labels[r];
    if (counted && (label < 0 || label >= vocab))
      throw std::invalid_argument("cross-entropy label " + std::to_string(label) + " of token " +
                                  std::to_string(r) + " is outside the vocabulary [0, " +
                                  std::to_string(vocab) +
                                  "); mask the token out or fix the data's vocabulary");
    labels[r] = counted ? label : -1;
    kept += counted ? 1 : 0;
  }
  return labels;
}

DeviceBuffer upload(const std::vector<int32_t>& values, CachingAllocator& allocator,
                    PinnedStaging* staging) {
  if (staging) return staging->upload(std::span<const int32_t>(values), allocator,
                                      MemoryCategory::Workspace);
  DeviceBuffer buffer(static_cast<int64_t>(values.size() * sizeof(int32_t)), &allocator,
                      MemoryCategory::Workspace);
  if (!values.empty())
    PIPELAB_CUDA_CHECK(cudaMemcpyAsync(buffer.data(), values.data(),
                                       static_cast<size_t>(buffer.bytes()),
                                       cudaMemcpyHostToDevice, allocator.stream()));
  return buffer;
}

}  // namespace

GpuLossResult gpu_token_loss(const DeviceTensor& outputs, const MicrobatchTargets& targets,
                             double scale, bool with_grad, const VocabRange& range, int tp,
                             int shard, const DeviceAllReduceSum& all_reduce_sum,
                             PinnedStaging* staging) {
  assert(targets.tokens > 0 && outputs.cols() == targets.tokens * range.rows);
  assert(tp == 1 || all_reduce_sum);
  DeviceGuard guard(outputs.device());
  CachingAllocator& allocator = *outputs.allocator();
  const cudaStream_t stream = outputs.stream();
  const int64_t rows = outputs.rows() * targets.tokens;
  const int64_t held = range.rows;
  int64_t kept = 0;
  const std::vector<int32_t> host_labels = kept_labels(targets, rows, range.vocab, kept);
  const DeviceBuffer labels = upload(host_labels, allocator, staging);
  const int32_t* label_data = labels.as<int32_t>();
  const float* logits = outputs.data();

  // Step 1: every shard's row maxima through one sum, then their maximum.
  DeviceTensor slots(tp, rows, &allocator, MemoryCategory::Workspace);  // zeros
  kernels::token_row_max(logits, rows, held, slots.data() + shard * rows, stream);
  if (tp > 1) all_reduce_sum(slots);
  DeviceTensor row_max = DeviceTensor::uninitialized(1, rows, &allocator, MemoryCategory::Workspace);
  kernels::max_over_slots(slots.data(), tp, rows, row_max.data(), stream);

  // Step 2: [sum of exp | label's logit | maxima left of the label], one collective.
  DeviceTensor sums = DeviceTensor::uninitialized(3, rows, &allocator, MemoryCategory::Workspace);
  kernels::token_local_sums(logits, row_max.data(), label_data, rows, held, range.begin,
                            sums.data(), stream);
  if (tp > 1) all_reduce_sum(sums);

  // Step 3.
  GpuLossResult result;
  result.samples = kept;
  if (with_grad)
    result.grad = DeviceTensor::uninitialized(outputs.rows(), outputs.cols(), &allocator,
                                              MemoryCategory::Activations);
  result.row_loss = DeviceBuffer(rows * static_cast<int64_t>(sizeof(double)), &allocator,
                                 MemoryCategory::Workspace);
  result.row_correct = DeviceBuffer(rows * static_cast<int64_t>(sizeof(int32_t)), &allocator,
                                    MemoryCategory::Workspace);
  const float inverse_tokens = kept ? 1.0f / static_cast<float>(kept) : 0.0f;
  const float outer = static_cast<float>(static_cast<double>(kept) * scale);
  kernels::token_loss_finish(logits, row_max.data(), sums.data(), label_data, rows, held,
                             range.begin, inverse_tokens, outer,
                             with_grad ? result.grad.data() : nullptr,
                             result.row_loss.as<double>(), result.row_correct.as<int32_t>(),
                             stream);
  return result;
}

}  // namespace pipelab::gpu
