#include "core/data/load_dataset.h"

#include <algorithm>

#include "core/data/csv_reader.h"
#include "core/data/idx_folder.h"
#include "core/data/idx_reader.h"
#include "core/data/sequence_tasks.h"
#include "core/data/synthetic.h"
#include "core/data/text_corpus.h"
#include "core/text/quoted_excerpt.h"

namespace pipelab {

namespace {

// The samples before splitting: one pool, or a folder's official train/test pair
// (or a text file already split by position).
struct LoadedSamples {
  Dataset pool;                  // one pool to split (when there is no test set)
  std::optional<Dataset> train;  // with `test`: the official split
  std::optional<Dataset> test;
};

LoadedSamples load_idx_source(const DatasetOptions& options) {
  const bool mnist_like = options.source == "mnist" || options.source == "fashion-mnist";
  IdxExpectations expectations = mnist_like ? mnist_expectations() : IdxExpectations{};
  expectations.dataset_name =
      mnist_like ? (options.source == "mnist" ? "MNIST" : "Fashion-MNIST") : "IDX";
  const IdxFolder folder = find_idx_files(options.path, options.source);
  LoadedSamples loaded;
  if (!folder.test) {
    loaded.pool = load_idx_pair(folder.train->images, folder.train->labels, expectations);
    loaded.pool.name = options.source;
    return loaded;
  }
  loaded.train = load_idx_pair(folder.train->images, folder.train->labels, expectations);
  loaded.test = load_idx_pair(folder.test->images, folder.test->labels, expectations);
  if (loaded.train->features != loaded.test->features) {
    throw DataError(path_excerpt(folder.test->images) + ": images have " +
                    std::to_string(loaded.test->features) + " pixels but " +
                    path_excerpt(folder.train->images) + " has " +
                    std::to_string(loaded.train->features));
  }
  // Both sets must agree on the class count even when one lacks the top label.
  const int classes = std::max(loaded.train->classes, loaded.test->classes);
  loaded.train->classes = classes;
  loaded.test->classes = classes;
  loaded.train->name = options.source;
  loaded.test->name = options.source;
  return loaded;
}

LoadedSamples load_samples(const DatasetOptions& options) {
  LoadedSamples loaded;
  if (is_synthetic_source(options.source)) {
    SyntheticOptions synthetic;
    synthetic.samples = options.samples;
    synthetic.classes = options.classes;
    synthetic.features = options.features;
    synthetic.noise = options.noise;
    synthetic.seed = options.seed;
    loaded.pool = make_synthetic(options.source, synthetic);
    return loaded;
  }
  if (is_sequence_task(options.source)) {
    SequenceTaskOptions task;
    task.samples = options.samples;
    task.sequence_length = options.sequence_length;
    task.vocab = options.vocab;
    task.seed = options.seed;
    loaded.pool = make_sequence_task(options.source, task);
    return loaded;
  }
  if (options.source == "text") {
    // Split by position here, so that no window is shared between the splits.
    TextCorpusOptions text;
    text.sequence_length = options.sequence_length;
    text.stride = options.stride;
    text.validation_fraction = options.validation_fraction;
    DataSplit split = load_text_corpus(options.path, text);
    loaded.train = std::move(split.train);
    loaded.test = std::move(split.validation);
    return loaded;
  }
  if (options.source == "csv") {
    if (options.path.empty()) throw DataError("csv: data.path is empty; name the CSV file");
    loaded.pool = read_csv_dataset(options.path, CsvOptions{options.csv_label_column});
    return loaded;
  }
  if (options.source == "mnist" || options.source == "fashion-mnist" || options.source == "idx") {
    return load_idx_source(options);
  }
  std::string valid;
  for (const auto& name : dataset_source_names()) valid += (valid.empty() ? "" : ", ") + name;
  for (const auto& name : sequence_source_names()) valid += ", " + name;
  throw DataError("unknown data.source " + quoted_excerpt(options.source) + ": valid sources are " +
                  valid);
}

}  // namespace

std::vector<std::string> dataset_source_names() {
  std::vector<std::string> names = {"mnist", "fashion-mnist", "idx", "csv"};
  for (const auto& name : synthetic_source_names()) names.push_back(name);
  return names;
}

bool is_file_source(const std::string& source) {
  return source == "mnist" || source == "fashion-mnist" || source == "idx" || source == "csv" ||
         source == "text";
}

std::vector<std::string> sequence_source_names() {
  std::vector<std::string> names = sequence_task_names();
  names.push_back("text");
  return names;
}

bool is_sequence_source(const std::string& source) {
  return is_sequence_task(source) || source == "text";
}

Normalization default_normalization(const std::string& source) {
  if (is_sequence_source(source)) return Normalization::None;
  if (source == "csv") return Normalization::PerFeature;
  if (is_file_source(source)) return Normalization::Global;
  return Normalization::None;
}

DataSplit load_dataset(const DatasetOptions& options) {
  check_validation_fraction(options.validation_fraction);
  if (options.limit < 0) {
    throw DataError("data.limit is " + std::to_string(options.limit) +
                    "; use 0 for all samples or a positive count");
  }
  if (is_sequence_source(options.source) && options.normalization &&
      *options.normalization != Normalization::None) {
    throw DataError(options.source + ": data.normalization is '" +
                    normalization_name(*options.normalization) +
                    "', but a sequence set's inputs are token ids, which must not be scaled; "
                    "use none");
  }
  LoadedSamples loaded = load_samples(options);

  DataSplit split;
  if (loaded.test) {
    // The official split: shuffle each file (different seeds keep the orders unrelated).
    split.train = shuffle_samples(*loaded.train, options.seed);
    split.validation = shuffle_samples(*loaded.test, options.seed + 1);
    int64_t held_out = options.validation_fraction > 0.0 ? split.validation.samples : 0;
    if (options.limit > 0) {
      held_out = std::min(held_out, validation_count(options.limit, options.validation_fraction));
      if (options.limit - held_out < 1) {
        throw DataError(options.source + ": data.limit " + std::to_string(options.limit) +
                        " leaves no training sample after validation; raise it");
      }
      split.train = first_samples(split.train, options.limit - held_out);
    }
    split.validation = first_samples(split.validation, held_out);
    split.train.name = options.source + " train";
    split.validation.name = options.source + " validation";
  } else {
    Dataset pool = shuffle_samples(loaded.pool, options.seed);
    if (options.limit > 0) pool = first_samples(pool, options.limit);
    split = split_by_fraction(pool, options.validation_fraction);
  }

  const Normalization mode = options.normalization.value_or(default_normalization(options.source));
  split.normalization = fit_normalization(split.train, mode);
  apply_normalization(split.normalization, split.train);
  apply_normalization(split.normalization, split.validation);
  return split;
}

}  // namespace pipelab
