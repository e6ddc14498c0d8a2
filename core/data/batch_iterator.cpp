#include "core/data/batch_iterator.h"

#include <algorithm>
#include <cassert>
#include <numeric>

#include "core/data/random.h"

namespace pipelab {

namespace {

// Each epoch draws from its own stream, so an epoch's order never depends on
// how many epochs came before. The high bit keeps these streams apart from the
// small stream numbers the generators use.
constexpr uint64_t kEpochStreamBase = uint64_t{1} << 63;

}  // namespace

Batch Batch::slice(int64_t begin, int64_t count) const {
  assert(begin >= 0 && count >= 0 && begin + count <= size);
  Batch part;
  part.size = count;
  part.features = features;
  part.target_width = target_width;
  part.x.assign(x.begin() + begin * features, x.begin() + (begin + count) * features);
  if (!labels.empty()) part.labels.assign(labels.begin() + begin, labels.begin() + begin + count);
  if (!targets.empty()) {
    part.targets.assign(targets.begin() + begin * target_width,
                        targets.begin() + (begin + count) * target_width);
  }
  if (!token_labels.empty()) {
    part.token_labels.assign(token_labels.begin() + begin * features,
                             token_labels.begin() + (begin + count) * features);
    part.loss_mask.assign(loss_mask.begin() + begin * features,
                          loss_mask.begin() + (begin + count) * features);
  }
  part.sample_ids.assign(sample_ids.begin() + begin, sample_ids.begin() + begin + count);
  return part;
}

void gather_batch(const Dataset& dataset, std::span<const int64_t> sample_ids,
                  TargetEncoding encoding, Batch& out) {
  assert(has_consistent_shape(dataset));
  const auto count = static_cast<int64_t>(sample_ids.size());
  const bool one_hot = dataset.is_classification() && encoding == TargetEncoding::OneHot;
  out.size = count;
  out.features = dataset.features;
  out.target_width =
      dataset.is_classification() ? (one_hot ? dataset.classes : 0) : dataset.target_width;
  out.sample_ids.assign(sample_ids.begin(), sample_ids.end());
  out.x.resize(static_cast<size_t>(count * dataset.features));
  out.labels.clear();
  out.targets.assign(static_cast<size_t>(count * out.target_width), 0.0f);
  const int64_t sequence_tokens = dataset.is_sequence() ? count * dataset.features : 0;
  out.token_labels.resize(static_cast<size_t>(sequence_tokens));
  out.loss_mask.resize(static_cast<size_t>(sequence_tokens));
  for (int64_t row = 0; row < count; ++row) {
    const int64_t sample = sample_ids[static_cast<size_t>(row)];
    assert(sample >= 0 && sample < dataset.samples);
    std::copy_n(dataset.row(sample), dataset.features, out.x.begin() + row * dataset.features);
    if (dataset.is_sequence()) {
      const int64_t from = sample * dataset.features;
      const int64_t to = row * dataset.features;
      std::copy_n(dataset.token_labels.begin() + from, dataset.features,
                  out.token_labels.begin() + to);
      std::copy_n(dataset.loss_mask.begin() + from, dataset.features, out.loss_mask.begin() + to);
    } else if (!dataset.is_classification()) {
      std::copy_n(dataset.targets.begin() + sample * dataset.target_width, dataset.target_width,
                  out.targets.begin() + row * dataset.target_width);
    } else if (one_hot) {
      out.targets[row * dataset.classes + dataset.labels[sample]] = 1.0f;
    } else {
      out.labels.push_back(dataset.labels[sample]);
    }
  }
}

BatchIterator::BatchIterator(const Dataset& dataset, const BatchOptions& options)
    : dataset_(dataset), options_(options) {
  if (options.batch_size < 1) {
    throw DataError("batch size " + std::to_string(options.batch_size) +
                    " is too small; use at least 1");
  }
  if (dataset.samples < 1) throw DataError(dataset.name + ": no samples to make batches from");
  if (options.drop_last && options.batch_size > dataset.samples) {
    throw DataError(dataset.name + ": batch size " + std::to_string(options.batch_size) +
                    " is larger than its " + std::to_string(dataset.samples) +
                    " samples; lower the batch size or use more samples");
  }
  batches_per_epoch_ = options.drop_last
                           ? dataset.samples / options.batch_size
                           : (dataset.samples + options.batch_size - 1) / options.batch_size;
}

std::vector<int64_t> BatchIterator::epoch_order(int64_t epoch) const {
  if (!options_.shuffle) {
    std::vector<int64_t> order(static_cast<size_t>(dataset_.samples));
    std::iota(order.begin(), order.end(), int64_t{0});
    return order;
  }
  Rng rng(options_.seed, kEpochStreamBase + static_cast<uint64_t>(epoch));
  return random_permutation(dataset_.samples, rng);
}

void BatchIterator::read(int64_t epoch, int64_t index, Batch& out) {
  assert(epoch >= 0 && index >= 0 && index < batches_per_epoch_);
  if (epoch != cached_epoch_) {
    cached_order_ = epoch_order(epoch);
    cached_epoch_ = epoch;
  }
  const int64_t begin = index * options_.batch_size;
  const int64_t end = std::min(begin + options_.batch_size, dataset_.samples);
  gather_batch(dataset_,
               std::span<const int64_t>(cached_order_)
                   .subspan(static_cast<size_t>(begin), static_cast<size_t>(end - begin)),
               options_.encoding, out);
}

void BatchIterator::next(Batch& out) {
  read(next_epoch_, next_index_, out);
  if (++next_index_ == batches_per_epoch_) {
    next_index_ = 0;
    ++next_epoch_;
  }
}

}  // namespace pipelab
