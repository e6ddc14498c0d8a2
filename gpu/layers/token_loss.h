// The next-token cross-entropy of a sequence model's logits on the GPU,
// mirroring core/runtime/vocab_parallel_loss.h step for step (which it cites
// for the why): the logits of a micro-batch may be split over the tensor-
// parallel shards by vocabulary, and the loss needs no gathered logits:
//   1. each shard writes its row maxima into its slot of a tp x rows buffer
//      of zeros; one all-reduce (sum) gives every shard every slot, and the
//      maximum over the slots is the row's;
//   2. per row sum(exp(z - max)), the label's logit and the maxima left of
//      the label, one 3 x rows buffer, all-reduced;
//   3. the loss, accuracy and this shard's gradient columns, per row on the
//      device (kernels/token_loss.h).
// Without tensor parallelism (tp = 1, no all-reduce) the same three steps run
// on the whole vocabulary. Rows the loss mask drops count nowhere.
#pragma once

#include <cstdint>
#include <functional>

#include "core/nn/embedding.h"
#include "core/runtime/training_data.h"
#include "gpu/layers/loss.h"
#include "gpu/memory/pinned_staging.h"

namespace pipelab::gpu {

using DeviceAllReduceSum = std::function<void(DeviceTensor& values)>;

// `outputs` is the shard's [rows, tokens x range.rows] logits; `scale` and the
// gradient as core/runtime/microbatch_loss.h's output_loss (the gradient is
// the shard's columns, in outputs' shape). `all_reduce_sum` may be empty when
// tp = 1. Labels go up through `staging` when given. Throws
// std::invalid_argument, as the CPU, for a kept label outside the vocabulary.
GpuLossResult gpu_token_loss(const DeviceTensor& outputs, const MicrobatchTargets& targets,
                             double scale, bool with_grad, const VocabRange& range, int tp,
                             int shard, const DeviceAllReduceSum& all_reduce_sum,
                             PinnedStaging* staging = nullptr);

}  // namespace pipelab::gpu
