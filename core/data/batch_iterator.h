// BatchIterator: cuts a dataset into batches, each one contiguous buffers the
// trainer can slice into micro-batches. The sample order of an epoch depends
// only on (seed, epoch), so any batch can be rebuilt on its own: a run that
// restarts at step s sees the same data as one that never stopped.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "core/data/dataset.h"

namespace pipelab {

enum class TargetEncoding {
  Labels,  // classification: Batch::labels (for cross-entropy)
  OneHot,  // classification: Batch::targets as one-hot rows of width `classes` (for MSE)
};

struct Batch {
  int64_t size = 0;                   // samples in this batch
  int64_t features = 0;               // sequence sets: tokens per sample
  int64_t target_width = 0;           // columns of `targets` (0 when it is empty)
  std::vector<float> x;               // size x features (sequence sets: token ids)
  std::vector<int32_t> labels;        // classification with TargetEncoding::Labels
  std::vector<float> targets;         // one-hot (OneHot) or regression values: size x target_width
  std::vector<int32_t> token_labels;  // sequence sets: size x features next-token targets
  std::vector<uint8_t> loss_mask;     // sequence sets: size x features, 1 = counted
  std::vector<int64_t> sample_ids;    // which dataset rows, in batch order

  // Rows [begin, begin + count) as a batch of their own (for micro-batches).
  Batch slice(int64_t begin, int64_t count) const;
};

// Copies the rows `sample_ids` of `dataset` into `out`, reusing its storage.
// Regression sets always fill `targets`; classification sets fill `labels` or
// one-hot `targets` as `encoding` says; sequence sets always fill
// `token_labels` and `loss_mask` (a one-hot row per token would be vocab times
// the batch, so `encoding` does not apply to them).
void gather_batch(const Dataset& dataset, std::span<const int64_t> sample_ids,
                  TargetEncoding encoding, Batch& out);

struct BatchOptions {
  int64_t batch_size = 64;
  uint64_t seed = 1;
  bool shuffle = true;     // false: every epoch in dataset order
  bool drop_last = false;  // true: skip the final short batch so every batch has batch_size
  TargetEncoding encoding = TargetEncoding::Labels;
};

class BatchIterator {
 public:
  // Keeps a reference to `dataset`, which must outlive the iterator. Throws
  // DataError for batch_size < 1, an empty dataset, or drop_last with fewer
  // samples than one batch.
  BatchIterator(const Dataset& dataset, const BatchOptions& options);

  int64_t batches_per_epoch() const { return batches_per_epoch_; }

  // Batch `index` (0-based) of `epoch`: the same samples every time it is asked for.
  void read(int64_t epoch, int64_t index, Batch& out);

  // The next batch of an endless stream: epoch 0's batches, then epoch 1's
  // (reshuffled), and so on.
  void next(Batch& out);
  int64_t epoch() const { return next_epoch_; }     // of the batch next() returns next
  int64_t position() const { return next_index_; }  // its index within that epoch

  // The sample order of `epoch`: a permutation of 0..samples-1.
  std::vector<int64_t> epoch_order(int64_t epoch) const;

 private:
  const Dataset& dataset_;
  BatchOptions options_;
  int64_t batches_per_epoch_ = 0;
  int64_t cached_epoch_ = -1;  // which epoch cached_order_ holds
  std::vector<int64_t> cached_order_;
  int64_t next_epoch_ = 0;
  int64_t next_index_ = 0;
};

}  // namespace pipelab
