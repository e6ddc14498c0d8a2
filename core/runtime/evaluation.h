// Evaluation: the validation loss and accuracy of the weights the stages hold.
// The stages' weights (every pipeline stage, every tensor-parallel shard's
// slice) are copied into one whole model on no device (uncounted memory) and
// run forward in evaluation mode (dropout off) over the validation set.
#pragma once

#include <cstdint>
#include <limits>

#include "core/data/dataset.h"
#include "core/model/model_spec.h"
#include "core/nn/sequential.h"

namespace pipelab {

struct EvaluationResult {
  double loss = std::numeric_limits<double>::quiet_NaN();      // mean over the samples (sequence sets: counted positions)
  double accuracy = std::numeric_limits<double>::quiet_NaN();  // classification and sequence sets
  int64_t samples = 0;
};

class Evaluator {
 public:
  // Keeps references to `data`, which must outlive the evaluator.
  Evaluator(const ModelSpec& model, uint64_t seed, const Dataset& data);

  // Copies one stage shard's weights (shard `shard` of `tp`) into the whole
  // model. Under expert parallelism each member of the first expert-parallel
  // group brings its experts (`experts`); member 0 the rest of the stage.
  void copy_weights_from(Sequential& stage, int tp, int shard, ExpertShard experts = {});

  // Forward over the whole data set in batches of `batch_rows`.
  EvaluationResult evaluate(int64_t batch_rows = 1024);

  Sequential& whole_model() { return whole_; }

 private:
  LossType loss_;
  const Dataset& data_;
  Sequential whole_;
};

}  // namespace pipelab
