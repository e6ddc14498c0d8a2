// Finding the IDX files in a folder laid out like MNIST's download:
//   train-images-idx3-ubyte(.gz)  train-labels-idx1-ubyte(.gz)
//   t10k-images-idx3-ubyte(.gz)   t10k-labels-idx1-ubyte(.gz)
// Fashion-MNIST uses the same names. More generally an images file is any
// "<prefix>images-idx<N>-ubyte" and its labels file "<prefix>labels-idx1-ubyte"
// (each optionally ending in .gz), so EMNIST-style names work too.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace pipelab {

struct IdxFilePair {
  std::string images;  // full paths
  std::string labels;
};

struct IdxFolder {
  // The training pair: a prefix containing "train". When the folder holds
  // just one pair whatever its name (say only the t10k pair), it is here.
  std::optional<IdxFilePair> train;
  // The test pair (prefix containing "t10k" or "test"), when the folder also
  // holds a training pair.
  std::optional<IdxFilePair> test;
};

// Throws DataError naming the folder when it is missing, holds no pair, holds
// an images file without its labels file (or the reverse), or holds pairs
// whose roles cannot be told apart. `dataset_name` (e.g. "mnist") goes into
// the messages, with the download hint for MNIST-like sets.
IdxFolder find_idx_files(const std::string& folder, const std::string& dataset_name);

// The same for the names of the regular files in `folder`, already listed.
IdxFolder pair_idx_files(const std::string& folder, const std::vector<std::string>& file_names,
                         const std::string& dataset_name);

}  // namespace pipelab
