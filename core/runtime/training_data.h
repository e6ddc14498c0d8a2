// TrainingData: the experiment's data set, loaded once, and the batches each
// training step reads, cut per data-parallel replica and micro-batch.
//
// Step t reads batch t of an endless stream of shuffled epochs (batches of
// training.batch_size samples, the last short batch of an epoch dropped), so
// a step's samples depend only on the seed and t, never on the split. Replica
// r of dp reads rows [r B/dp, (r+1) B/dp) of the global batch B, then its
// micro-batches in order; a micro-batch's first_row is its rows' index in the
// global batch, which keys dropout the same way a single device would.
// Under context parallelism (parallel.cp > 1) context rank c reads only its
// positions of each sample's tokens, labels and loss mask (context_split.h);
// the gradient scale still counts the whole batch's positions.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <vector>

#include "core/data/batch_iterator.h"
#include "core/data/load_dataset.h"
#include "core/io/experiment.h"
#include "core/nn/tensor.h"

namespace pipelab {

// What a micro-batch's loss compares the outputs with. `batch` keeps the
// storage alive.
struct MicrobatchTargets {
  std::shared_ptr<const Batch> batch;
  std::span<const int32_t> labels;  // classification (also under mse, for accuracy)
  const float* targets = nullptr;   // mse: rows x width (one-hot rows for classification)
  int64_t rows = 0;
  int64_t width = 0;  // 0 when there are no targets
  // Sequence sets: positions per sample (0 otherwise), and per position the
  // next token and whether it counts (rows x tokens each, row-major).
  int64_t tokens = 0;
  std::span<const int32_t> token_labels;
  std::span<const uint8_t> loss_mask;
  // Context parallelism: the rank's labels and mask, which the spans view.
  struct ContextPart {
    std::vector<int32_t> labels;
    std::vector<uint8_t> mask;
  };
  std::shared_ptr<const ContextPart> context_part;
};

class TrainingData {
 public:
  // Loads or generates the data (DataError for missing or malformed files) and
  // checks it fits the model (ExperimentError naming the field to change).
  explicit TrainingData(const Experiment& experiment);

  const Dataset& train() const { return split_.train; }
  const Dataset& validation() const { return split_.validation; }
  LossType loss() const { return loss_; }
  int64_t global_batch() const { return global_batch_; }
  int64_t microbatch_rows() const { return microbatch_rows_; }
  int64_t batches_per_epoch() const { return iterator_->batches_per_epoch(); }

  // What a micro-batch's loss gradient is multiplied by so that the gradients
  // accumulated over the step's micro-batches and replicas are those of the
  // whole batch's mean loss: 1 / global_batch(), or for a sequence set 1 /
  // the positions its loss mask counts in step `step`'s whole batch.
  double gradient_scale(int step);

  // Index in the global batch of the first row of replica `replica`'s micro-batch.
  int64_t first_row(int replica, int microbatch) const;

  // The global batch of step `step` (thread-safe; recent steps are cached).
  std::shared_ptr<const Batch> batch(int step);
  // A micro-batch's inputs, as a tensor on `allocator` counted as Activations
  // (context rank `context`'s positions under context parallelism).
  Tensor inputs(int step, int replica, int microbatch, DeviceAllocator* allocator, int context = 0);
  MicrobatchTargets targets(int step, int replica, int microbatch, int context = 0);

 private:
  DataSplit split_;
  LossType loss_ = LossType::CrossEntropy;
  TargetEncoding encoding_ = TargetEncoding::Labels;
  int64_t global_batch_ = 0;
  int64_t replica_rows_ = 0;
  int64_t microbatch_rows_ = 0;
  int cp_ = 1;  // context-parallel ranks splitting each sequence
  std::unique_ptr<BatchIterator> iterator_;
  std::mutex mutex_;
  std::map<int, std::shared_ptr<const Batch>> cache_;  // by step
};

}  // namespace pipelab
