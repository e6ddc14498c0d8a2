// The data sources an experiment may name, and the sample shape each implies,
// so a model's input and output widths can be checked before any data loads.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/io/experiment.h"

namespace pipelab {

// mnist, fashion-mnist, idx, csv, spiral, moons, circles, xor, blobs, teacher,
// and the token-sequence sources text, copy, reverse, sort, add.
std::vector<std::string> data_source_names();
bool is_data_source(const std::string& source);
// Token sequences, for a model that starts with an embedding.
bool is_sequence_data_source(const std::string& source);
// Sources read from data.path (the others are generated from the seed).
bool is_file_data_source(const std::string& source);

// Input width and class count a source gives; 0 where only the files know
// (idx, csv). MNIST-style sets: 784 features, 10 classes. spiral: 2 features,
// data.classes arms. moons, circles, xor: 2 features, 2 classes. blobs and
// teacher: data.features features, data.classes classes. copy, reverse, sort,
// add: data.vocab token ids (the "classes" of each position); text: the file's.
struct DataShape {
  int64_t features = 0;
  int64_t classes = 0;
};
DataShape data_source_shape(const DataSpec& data);

}  // namespace pipelab
