// The next-token cross-entropy's per-row and per-element formulas
// (core/nn/token_cross_entropy.h, core/runtime/vocab_parallel_loss.h), for
// the host and the device, in the CPU's order of operations. Per kept row,
// after the all-reduces: max the row's maximum over every shard, sum_exp the
// sum of exp(z - max), label_logit the label's logit:
//   loss  = log(sum_exp) + max - label_logit                (double)
//   grad  = (exp(z - max) (1 / kept) / sum_exp - [label] / kept) outer
// with outer = kept * scale (the step's averaging), applied after, as the CPU
// scales its gradient tensor.
#pragma once

#include <math.h>

#include "gpu/device/host_device.h"

namespace pipelab::gpu::token_loss_math {

PIPELAB_HOST_DEVICE inline double row_loss(float sum_exp, float max_logit, float label_logit) {
  return log(static_cast<double>(sum_exp)) + max_logit - label_logit;
}

PIPELAB_HOST_DEVICE inline float exp_shifted(float logit, float max_logit) {
  return expf(logit - max_logit);
}

// One logit's gradient: inverse_tokens = 1 / kept, outer = kept * scale.
PIPELAB_HOST_DEVICE inline float gradient(float logit, float max_logit, float sum_exp,
                                          float inverse_tokens, bool is_label, float outer) {
  const float factor = inverse_tokens / sum_exp;
  float g = expf(logit - max_logit) * factor;
  if (is_label) g -= inverse_tokens;
  return g * outer;
}

// Whether the row counts as correct (count_correct's first maximum is the
// label): the label's logit is the maximum and no column left of it reaches it.
PIPELAB_HOST_DEVICE inline bool correct(float label_logit, float max_logit, float ties_before) {
  return label_logit == max_logit && ties_before == 0.0f;
}

}  // namespace pipelab::gpu::token_loss_math
