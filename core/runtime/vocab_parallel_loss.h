// The next-token loss of a micro-batch whose logits are split over the
// tensor-parallel shards by vocabulary (the output layer is column-parallel:
// stage_profile.h), computed without gathering the logits, as Megatron's
// vocab-parallel cross-entropy: token_cross_entropy.h's three steps with two
// all-reduces (sums) over the shards between them.
//   1. the row maxima: each shard writes its own into its slot of a tp x rows
//      buffer of zeros; the all-reduced buffer holds every shard's, and the
//      maximum over the slots is exact (a sum with zeros adds nothing), so no
//      MAX collective is needed;
//   2. per row sum(exp(z - max)), the label's logit, and for the accuracy the
//      count of maximal logits left of the label, in one buffer of 3 x rows.
// Every shard then holds the same loss, accuracy and the gradient of its own
// columns, and these equal one device's (count_correct's first maximum is the
// label exactly when the label's logit is the maximum and no earlier column
// reaches it), up to the order of the exchanged sums.
//
// These two small collectives (rows x tp, then rows x 3 floats) are the
// schedule's two tensor-parallel all-reduces listed for the output layer
// after the last stage's F (stage_profile.cpp), where the loss runs.
#pragma once

#include <optional>
#include <vector>

#include "core/io/experiment.h"
#include "core/nn/all_reduce.h"
#include "core/nn/embedding.h"
#include "core/nn/loss.h"
#include "core/plan/stage_profile.h"
#include "core/runtime/training_data.h"

namespace pipelab {

// The vocabulary columns shard `shard`'s logits hold, when the output layer
// of a sequence model is column-parallel over the vocabulary (`roles`, one per
// model layer, from tensor_parallel_roles); nullopt when every shard holds the
// whole logits.
std::optional<VocabRange> logits_shard(const Experiment& experiment,
                                       const std::vector<TensorParallelRole>& roles, int shard);

// `outputs` is this shard's [rows, tokens x range.rows] logits, `range` the
// vocabulary columns it holds (vocab_shard), `shard` of `tp` its place in the
// group, `all_reduce_sum` the group's in-place sum. `scale` and the result as
// output_loss's (microbatch_loss.h); the gradient is this shard's columns.
LossResult vocab_parallel_token_loss(const Tensor& outputs, const MicrobatchTargets& targets,
                                     double scale, bool with_grad, const VocabRange& range,
                                     int tp, int shard, const AllReduceFunction& all_reduce_sum);

}  // namespace pipelab
