// Losses on a stage's final output on the GPU, with core/nn/loss.h's
// definitions, scaling and checks. The kernels write each row's loss (and,
// for cross-entropy, whether the row was classified right) into small device
// buffers; totals() copies them back when the caller wants the numbers (at the
// end of a step, say) and sums them in row order in double, as the CPU does,
// so the GPU never waits for the host in between.
#pragma once

#include <cstdint>
#include <span>

#include "core/nn/loss.h"
#include "gpu/memory/device_buffer.h"
#include "gpu/memory/device_tensor.h"
#include "gpu/memory/pinned_staging.h"

namespace pipelab::gpu {

struct GpuLossResult {
  int64_t samples = 0;
  DeviceTensor grad;         // dLoss/d(output) times scale, Activations; empty if not asked
  DeviceBuffer row_loss;     // double per row, Workspace
  DeviceBuffer row_correct;  // int32 per row (cross-entropy), Workspace; empty for mse

  // Waits for the loss kernels; loss_sum, correct and samples as the CPU
  // computes them (LossResult::grad stays empty: the gradient is `grad`).
  LossResult totals() const;
};

// Checks the labels like the CPU loss (one per row, each in [0, classes); throws
// std::invalid_argument otherwise) and copies them to the device (Workspace):
// through `staging`'s pinned buffers when given (the per-micro-batch path,
// which must not stall the host thread), else straight from the host memory.
DeviceBuffer upload_labels(std::span<const int32_t> labels, int64_t batch, int64_t classes,
                           CachingAllocator& allocator, PinnedStaging* staging = nullptr);

// Softmax cross-entropy over logits [batch, classes] and labels from upload_labels.
GpuLossResult gpu_softmax_cross_entropy(const DeviceTensor& logits, const DeviceBuffer& labels,
                                        double scale, bool with_grad = true);
// The same from host labels: checks and uploads them first (pageable: for
// tests and one-off losses; per micro-batch, use upload_labels with staging).
GpuLossResult gpu_softmax_cross_entropy(const DeviceTensor& logits, std::span<const int32_t> labels,
                                        double scale, bool with_grad = true);
// Mean squared error; throws std::invalid_argument when the shapes differ.
GpuLossResult gpu_mean_squared_error(const DeviceTensor& output, const DeviceTensor& target,
                                     double scale, bool with_grad = true);

}  // namespace pipelab::gpu
