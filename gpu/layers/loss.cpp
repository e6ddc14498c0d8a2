#include "gpu/layers/loss.h"

#include <stdexcept>
#include <string>
#include <vector>

#include "gpu/device/cuda_check.h"
#include "gpu/device/device_guard.h"
#include "gpu/kernels/loss.h"

namespace pipelab::gpu {
namespace {

// The result's buffers on the output's allocator.
GpuLossResult make_result(const DeviceTensor& output, bool with_grad, bool with_correct) {
  GpuLossResult result;
  result.samples = output.rows();
  CachingAllocator* allocator = output.allocator();
  if (with_grad)
    result.grad = DeviceTensor::uninitialized(output.rows(), output.cols(), allocator,
                                              MemoryCategory::Activations);
  result.row_loss = DeviceBuffer(output.rows() * static_cast<int64_t>(sizeof(double)), allocator,
                                 MemoryCategory::Workspace);
  if (with_correct)
    result.row_correct = DeviceBuffer(output.rows() * static_cast<int64_t>(sizeof(int32_t)),
                                      allocator, MemoryCategory::Workspace);
  return result;
}

}  // namespace

LossResult GpuLossResult::totals() const {
  LossResult result;
  result.samples = samples;
  if (samples == 0) return result;
  CachingAllocator* allocator = row_loss.allocator();
  DeviceGuard guard(allocator->device());
  // One loss per row: as many as samples, or more when a token loss's mask
  // drops rows (their losses are 0).
  std::vector<double> losses(static_cast<size_t>(row_loss.bytes()) / sizeof(double));
  PIPELAB_CUDA_CHECK(cudaMemcpyAsync(losses.data(), row_loss.data(),
                                     static_cast<size_t>(row_loss.bytes()), cudaMemcpyDeviceToHost,
                                     allocator->stream()));
  std::vector<int32_t> correct;
  if (!row_correct.empty()) {
    correct.resize(static_cast<size_t>(row_correct.bytes()) / sizeof(int32_t));
    PIPELAB_CUDA_CHECK(cudaMemcpyAsync(correct.data(), row_correct.data(),
                                       static_cast<size_t>(row_correct.bytes()),
                                       cudaMemcpyDeviceToHost, allocator->stream()));
  }
  PIPELAB_CUDA_CHECK(cudaStreamSynchronize(allocator->stream()));
  for (double loss : losses) result.loss_sum += loss;
  for (int32_t hit : correct) result.correct += hit;
  return result;
}

DeviceBuffer upload_labels(std::span<const int32_t> labels, int64_t batch, int64_t classes,
                           CachingAllocator& allocator, PinnedStaging* staging) {
  if (static_cast<int64_t>(labels.size()) != batch)
    throw std::invalid_argument("cross-entropy got " + std::to_string(labels.size()) +
                                " labels for a batch of " + std::to_string(batch) +
                                "; give one label per sample");
  for (size_t r = 0; r < labels.size(); ++r)
    if (labels[r] < 0 || labels[r] >= classes)
      throw std::invalid_argument("cross-entropy label " + std::to_string(labels[r]) +
                                  " of sample " + std::to_string(r) + " is outside [0, " +
                                  std::to_string(classes) +
                                  "); the model's last width must cover every class");
  if (staging) return staging->upload(labels, allocator, MemoryCategory::Workspace);
  DeviceBuffer buffer(batch * static_cast<int64_t>(sizeof(int32_t)), &allocator,
                      MemoryCategory::Workspace);
  if (batch > 0) {
    DeviceGuard guard(allocator.device());
    PIPELAB_CUDA_CHECK(cudaMemcpyAsync(buffer.data(), labels.data(),
                                       static_cast<size_t>(buffer.bytes()), cudaMemcpyHostToDevice,
                                       allocator.stream()));
  }
  return buffer;
}

GpuLossResult gpu_softmax_cross_entropy(const DeviceTensor& logits, const DeviceBuffer& labels,
                                        double scale, bool with_grad) {
  if (labels.bytes() != logits.rows() * static_cast<int64_t>(sizeof(int32_t)))
    throw std::invalid_argument(
        "cross-entropy got " + std::to_string(labels.bytes() / sizeof(int32_t)) +
        " labels for a batch of " + std::to_string(logits.rows()) + "; give one label per sample");
  GpuLossResult result = make_result(logits, with_grad, true);
  if (logits.rows() == 0) return result;
  DeviceGuard guard(logits.device());
  kernels::softmax_cross_entropy(logits.data(), labels.as<int32_t>(), logits.rows(), logits.cols(),
                                 scale, with_grad ? result.grad.data() : nullptr,
                                 result.row_loss.as<double>(), result.row_correct.as<int32_t>(),
                                 logits.stream());
  return result;
}

GpuLossResult gpu_softmax_cross_entropy(const DeviceTensor& logits, std::span<const int32_t> labels,
                                        double scale, bool with_grad) {
  // The label buffer may die right after the launch: its block is reused only
  // by work queued later on the same stream.
  const DeviceBuffer device_labels =
      upload_labels(labels, logits.rows(), logits.cols(), *logits.allocator());
  return gpu_softmax_cross_entropy(logits, device_labels, scale, with_grad);
}

GpuLossResult gpu_mean_squared_error(const DeviceTensor& output, const DeviceTensor& target,
                                     double scale, bool with_grad) {
  if (!output.same_shape(target))
    throw std::invalid_argument(
        "mse target is " + std::to_string(target.rows()) + " x " + std::to_string(target.cols()) +
        " but the output is " + std::to_string(output.rows()) + " x " +
        std::to_string(output.cols()) + "; the model's last width must equal the target width");
  GpuLossResult result = make_result(output, with_grad, false);
  if (output.rows() == 0) return result;
  DeviceGuard guard(output.device());
  kernels::mean_squared_error(output.data(), target.data(), output.rows(), output.cols(), scale,
                              with_grad ? result.grad.data() : nullptr,
                              result.row_loss.as<double>(), output.stream());
  return result;
}

}  // namespace pipelab::gpu
