// The loss of a stage's final outputs against a micro-batch's targets
// (model.loss: softmax cross-entropy on labels, or mean squared error on
// targets, one-hot rows for a classification set), with its accuracy.
#pragma once

#include <cstdint>
#include <span>

#include "core/model/model_spec.h"
#include "core/nn/loss.h"
#include "core/runtime/training_data.h"

namespace pipelab {

// `scale` multiplies the gradient (1 / global batch in training). For mse on a
// classification set, `correct` counts rows whose arg-max is the label.
LossResult output_loss(LossType loss, const Tensor& outputs, const MicrobatchTargets& targets,
                       double scale, bool with_grad);

// Rows whose first maximal output is the label.
int64_t count_correct(const Tensor& outputs, std::span<const int32_t> labels);

}  // namespace pipelab
