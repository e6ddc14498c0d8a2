#include "core/runtime/training_data.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "core/io/experiment_io.h"
#include "core/nn/context_split.h"

namespace pipelab {
namespace {

// Steps whose batches stay cached; older ones are rebuilt on demand (a batch is
// a pure function of its step, so this only costs time).
constexpr size_t kCachedSteps = 16;

DatasetOptions dataset_options(const Experiment& experiment) {
  const DataSpec& data = experiment.data;
  DatasetOptions options;
  options.source = data.source;
  options.path = data.resolved_path.empty() ? data.path : data.resolved_path;
  options.validation_fraction = data.validation_fraction;
  options.samples = data.samples;
  options.classes = data.classes;
  options.features = data.features;
  options.noise = data.noise;
  options.limit = data.limit;
  options.seed = experiment.seed;
  options.sequence_length = sequence_length(experiment.model);
  options.vocab = data.vocab;
  options.stride = data.stride;
  return options;
}

// The model's ends must match the data; for files only now do we know the shape.
void check_fits_model(const Dataset& train, const ModelSpec& model) {
  if (train.is_sequence()) {
    // Every position's output scores the data's vocabulary; the embedding reads its ids.
    const int64_t per_token = output_features(model) / sequence_length(model);
    if (per_token != train.vocab)
      throw ExperimentError("the model outputs " + std::to_string(per_token) + " values per position but " +
                            train.name + " has a vocabulary of " + std::to_string(train.vocab) +
                            " tokens; set the last linear layer's out to " + std::to_string(train.vocab));
    if (model.layers.front().vocab < train.vocab)
      throw ExperimentError("the embedding's vocab = " + std::to_string(model.layers.front().vocab) + " but " +
                            train.name + " has " + std::to_string(train.vocab) +
                            " tokens; set model.layers[0].vocab to at least " + std::to_string(train.vocab));
    return;
  }
  const int64_t inputs = input_features(model);
  if (train.features != inputs)
    throw ExperimentError("model.input gives " + std::to_string(inputs) + " features but " +
                          train.name + " has " + std::to_string(train.features) +
                          "; set model.input to [" + std::to_string(train.features) + "]");
  const int64_t outputs = output_features(model);
  if (train.is_classification()) {
    if (outputs != train.classes)
      throw ExperimentError("the model outputs " + std::to_string(outputs) + " values but " +
                            train.name + " has " + std::to_string(train.classes) +
                            " classes; set the last linear layer's out to " +
                            std::to_string(train.classes));
    return;
  }
  if (model.loss == LossType::CrossEntropy)
    throw ExperimentError(train.name +
                          " is a regression set (no class labels), which model.loss = "
                          "cross-entropy cannot train; use model.loss = mse");
  if (outputs != train.target_width)
    throw ExperimentError("the model outputs " + std::to_string(outputs) + " values but " +
                          train.name + " has " + std::to_string(train.target_width) +
                          " targets per sample; set the last linear layer's out to " +
                          std::to_string(train.target_width));
}

}  // namespace

TrainingData::TrainingData(const Experiment& experiment)
    : split_(load_dataset(dataset_options(experiment))), loss_(experiment.model.loss) {
  check_fits_model(split_.train, experiment.model);
  const ParallelPlan& plan = experiment.parallel;
  global_batch_ = experiment.training.batch_size;
  if (plan.dp < 1 || plan.microbatches < 1 ||
      global_batch_ % (int64_t{plan.dp} * plan.microbatches) != 0)
    throw ExperimentError("training.batch_size = " + std::to_string(global_batch_) +
                          " must be a multiple of parallel.dp x parallel.microbatches = " +
                          std::to_string(plan.dp) + " x " + std::to_string(plan.microbatches));
  replica_rows_ = global_batch_ / plan.dp;
  cp_ = plan.cp;
  microbatch_rows_ = replica_rows_ / plan.microbatches;
  if (split_.train.samples < global_batch_)
    throw DataError(split_.train.name + ": the training split has " +
                    std::to_string(split_.train.samples) +
                    " samples, fewer than training.batch_size = " + std::to_string(global_batch_) +
                    "; lower the batch size or use more samples");
  encoding_ = loss_ == LossType::Mse ? TargetEncoding::OneHot : TargetEncoding::Labels;
  BatchOptions options;
  options.batch_size = global_batch_;
  options.seed = experiment.seed;
  options.shuffle = true;
  options.drop_last = true;  // every step sees a full batch, as dp x microbatches needs
  options.encoding = encoding_;
  iterator_ = std::make_unique<BatchIterator>(split_.train, options);
}

int64_t TrainingData::first_row(int replica, int microbatch) const {
  return replica * replica_rows_ + microbatch * microbatch_rows_;
}

std::shared_ptr<const Batch> TrainingData::batch(int step) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto cached = cache_.find(step);
  if (cached != cache_.end()) return cached->second;
  auto batch = std::make_shared<Batch>();
  const int64_t per_epoch = iterator_->batches_per_epoch();
  iterator_->read(step / per_epoch, step % per_epoch, *batch);
  // Under mse the labels are still wanted for accuracy.
  const Dataset& train = split_.train;
  if (train.is_classification() && batch->labels.empty()) {
    batch->labels.reserve(batch->sample_ids.size());
    for (int64_t id : batch->sample_ids) batch->labels.push_back(train.labels[id]);
  }
  cache_[step] = batch;
  while (cache_.size() > kCachedSteps) cache_.erase(cache_.begin());
  return batch;
}

Tensor TrainingData::inputs(int step, int replica, int microbatch, DeviceAllocator* allocator,
                            int context) {
  const std::shared_ptr<const Batch> whole = batch(step);
  const int64_t first = first_row(replica, microbatch);
  if (cp_ > 1) {
    const std::vector<int64_t> positions = context_positions(whole->features, cp_, context);
    const int64_t count = static_cast<int64_t>(positions.size());
    Tensor x(microbatch_rows_, count, allocator, MemoryCategory::Activations);
    for (int64_t r = 0; r < microbatch_rows_; ++r)
      for (int64_t t = 0; t < count; ++t)
        x.row(r)[t] = whole->x[static_cast<size_t>((first + r) * whole->features + positions[t])];
    return x;
  }
  Tensor x(microbatch_rows_, whole->features, allocator, MemoryCategory::Activations);
  std::memcpy(x.data(), whole->x.data() + first * whole->features,
              static_cast<size_t>(x.size()) * sizeof(float));
  return x;
}

MicrobatchTargets TrainingData::targets(int step, int replica, int microbatch, int context) {
  MicrobatchTargets targets;
  targets.batch = batch(step);
  const Batch& whole = *targets.batch;
  const int64_t first = first_row(replica, microbatch);
  targets.rows = microbatch_rows_;
  if (!whole.labels.empty())
    targets.labels = std::span<const int32_t>(whole.labels).subspan(first, microbatch_rows_);
  if (whole.target_width > 0) {
    targets.width = whole.target_width;
    targets.targets = whole.targets.data() + first * whole.target_width;
  }
  if (split_.train.is_sequence()) {
    const int64_t tokens = whole.features;
    targets.tokens = tokens;
    targets.token_labels =
        std::span<const int32_t>(whole.token_labels).subspan(first * tokens, microbatch_rows_ * tokens);
    targets.loss_mask =
        std::span<const uint8_t>(whole.loss_mask).subspan(first * tokens, microbatch_rows_ * tokens);
    if (cp_ > 1) {
      const std::vector<int64_t> positions = context_positions(tokens, cp_, context);
      auto part = std::make_shared<MicrobatchTargets::ContextPart>();
      for (int64_t r = 0; r < microbatch_rows_; ++r)
        for (int64_t position : positions) {
          const size_t at = static_cast<size_t>(r * tokens + position);
          part->labels.push_back(targets.token_labels[at]);
          part->mask.push_back(targets.loss_mask[at]);
        }
      targets.tokens = static_cast<int64_t>(positions.size());
      targets.token_labels = part->labels;
      targets.loss_mask = part->mask;
      targets.context_part = std::move(part);
    }
  }
  return targets;
}

double TrainingData::gradient_scale(int step) {
  if (!split_.train.is_sequence()) return 1.0 / static_cast<double>(global_batch_);
  const std::shared_ptr<const Batch> whole = batch(step);
  const int64_t counted = std::count_if(whole->loss_mask.begin(), whole->loss_mask.end(),
                                        [](uint8_t keep) { return keep != 0; });
  // No counted position: every gradient is zero anyway (token_cross_entropy).
  return counted > 0 ? 1.0 / static_cast<double>(counted) : 0.0;
}

}  // namespace pipelab
