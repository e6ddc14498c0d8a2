// IDX files, the format of MNIST and Fashion-MNIST: a big-endian header
// (magic 00 00 <type> <dimension count>, then one 32-bit size per dimension)
// followed by the values. Only unsigned-byte values (type 0x08) are read:
// images with magic 0x00000803 (count x rows x cols; more dimensions are
// flattened) and labels with magic 0x00000801. Files may be raw or gzip.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/data/dataset.h"

namespace pipelab {

struct IdxImages {
  int64_t count = 0;
  std::vector<int64_t> shape;   // per image, e.g. {28, 28}
  std::vector<uint8_t> pixels;  // count x product(shape), row-major
  int64_t pixels_per_image() const;
};

// Parse bytes already in memory; `path` names the file in error messages.
// Every header field is checked against the data before it is used: a wrong
// magic number, a truncated or over-long file, or an empty dimension throws
// DataError.
IdxImages parse_idx_images(std::span<const uint8_t> bytes, const std::string& path);
std::vector<uint8_t> parse_idx_labels(std::span<const uint8_t> bytes, const std::string& path);

// Read a file (raw or gzip) and parse it.
IdxImages read_idx_images(const std::string& path);
std::vector<uint8_t> read_idx_labels(const std::string& path);

// What an images/labels pair must look like, beyond agreeing with each other.
struct IdxExpectations {
  std::vector<int64_t> image_shape;  // empty: any shape
  int classes = 0;                   // labels must be below this; 0: classes = max label + 1
  std::string dataset_name = "IDX";  // for messages, e.g. "MNIST"
};

// MNIST and Fashion-MNIST: 28x28 images, labels 0..9.
IdxExpectations mnist_expectations();

// A classification set from an images file and its labels file: pixels are
// scaled from 0..255 to [0, 1]; classes come from the expectations or the labels.
// Throws DataError when the counts disagree, the shape is not the expected one,
// or a label is out of range.
Dataset load_idx_pair(const std::string& images_path, const std::string& labels_path,
                      const IdxExpectations& expectations);

// The same from files already parsed; the paths name them in messages.
Dataset idx_dataset(const IdxImages& images, const std::vector<uint8_t>& labels,
                    const std::string& images_path, const std::string& labels_path,
                    const IdxExpectations& expectations);

}  // namespace pipelab
