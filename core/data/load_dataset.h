// load_dataset: the one entry point from an experiment's data section to
// normalised training and validation sets. DatasetOptions mirrors DataSpec
// (core/io/experiment.h) field by field, plus the seed and a few loader knobs,
// so this folder does not depend on the experiment-file layer.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/data/normalization.h"
#include "core/data/split.h"

namespace pipelab {

struct DatasetOptions {
  std::string source = "spiral";  // see dataset_source_names() and sequence_source_names()
  std::string path;  // from DataSpec::resolved_path; mnist/fashion-mnist/idx: a folder,
                     // csv and text: a file
  double validation_fraction = 0.2;
  int64_t samples = 2048;  // synthetic sets
  int classes = 3;         // spiral, blobs, teacher (0: teacher regression)
  int features = 2;        // blobs, teacher
  double noise = 0.1;      // synthetic sets
  int64_t limit = 0;       // use at most this many samples in total (0 = all)
  uint64_t seed = 1;       // generation, shuffling and splitting
  // Unset: the source's default (images: global, csv: per-feature, synthetic: none).
  std::optional<Normalization> normalization;
  int csv_label_column = 0;      // csv: see CsvOptions
  int64_t sequence_length = 32;  // sequence sources: tokens per sample (the model's input width)
  int vocab = 16;                // copy, reverse, sort, add: token ids (text: the file decides)
  int64_t stride = 0;            // text: characters between windows (0: sequence_length)
};

// Every source name of a classification or regression set: mnist,
// fashion-mnist, idx, csv, then the synthetic sets.
std::vector<std::string> dataset_source_names();
bool is_file_source(const std::string& source);  // mnist, fashion-mnist, idx, csv, text

// The sources of token-sequence sets (Dataset::is_sequence()), for GPT-style
// models: the tasks copy, reverse, sort and add (sequence_tasks.h), then text
// (text_corpus.h). load_dataset() reads them too; they are listed apart so a
// list of sources for classifiers and regressors does not offer them.
std::vector<std::string> sequence_source_names();
bool is_sequence_source(const std::string& source);

// The default normalisation of a source (see DatasetOptions::normalization);
// none for sequence sources, whose token ids are never scaled.
Normalization default_normalization(const std::string& source);

// Loads or generates the samples, then:
//  1. shuffles them with the seed (a folder with train-* and t10k-* pairs keeps
//     its official split: train-* trains, t10k-* validates, each shuffled);
//  2. applies `limit` to the total: train keeps limit - round(limit * fraction)
//     samples and validation round(limit * fraction); with two pairs and no
//     limit, each keeps all of its file, and fraction 0 drops validation;
//  3. splits one pool by validation_fraction (the last samples validate);
//  4. fits the normalisation on the training split and applies it to both.
// text is split by position instead (see text_corpus.h), then each split is
// shuffled and limited like a folder's official pair.
// Throws DataError for an unknown source (listing the valid ones), bad
// parameters (a normalisation other than none for a sequence source among
// them), and missing or malformed files.
DataSplit load_dataset(const DatasetOptions& options);

}  // namespace pipelab
