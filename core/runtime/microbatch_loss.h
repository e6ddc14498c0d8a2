// The loss of a stage's final outputs against a micro-batch's targets
// (model.loss: softmax cross-entropy on labels, or mean squared error on
// targets, one-hot rows for a classification set; for a sequence set the
// next-token cross-entropy of every counted position), with its accuracy.
#pragma once

#include <cstdint>
#include <span>

#include "core/model/model_spec.h"
#include "core/nn/loss.h"
#include "core/runtime/training_data.h"

namespace pipelab {

// `scale` multiplies the gradient (TrainingData::gradient_scale in training).
// For mse on a classification set, `correct` counts rows whose arg-max is the
// label. For a sequence set (targets.tokens > 0) outputs are [rows, tokens x
// vocab] logits, and samples, loss_sum and correct count the positions the
// loss mask keeps: a step's mean is then the mean over its counted tokens.
LossResult output_loss(LossType loss, const Tensor& outputs, const MicrobatchTargets& targets,
                       double scale, bool with_grad);

// Rows whose first maximal output is the label, among those the mask keeps
// (an empty mask keeps every row).
int64_t count_correct(const Tensor& outputs, std::span<const int32_t> labels,
                      std::span<const uint8_t> mask = {});

}  // namespace pipelab
