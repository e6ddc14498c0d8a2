// Fuzz target: an IDX labels file and an IDX images file, each raw or gzip,
// read and paired as the mnist, fashion-mnist and idx sources read them.
// Bytes 0-1: the labels file's length (little-endian, capped at what is
// there); byte 2: bit 0 asks for MNIST's expectations; then the labels file,
// then the images file.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/data/dataset.h"
#include "core/data/file_bytes.h"
#include "core/data/idx_reader.h"
#include "tests/fuzz/fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace pipelab;
  if (size < 3) return 0;
  const size_t labels_size = std::min<size_t>(data[0] | (data[1] << 8), size - 3);
  const bool mnist = data[2] & 1;
  const uint8_t* labels_begin = data + 3;
  const uint8_t* images_begin = labels_begin + labels_size;
  try {
    const std::vector<uint8_t> labels = parse_idx_labels(
        decompress_if_gzip({labels_begin, images_begin}, "labels.gz"), "labels.gz");
    const IdxImages images = parse_idx_images(
        decompress_if_gzip({images_begin, data + size}, "images.gz"), "images.gz");
    const Dataset dataset = idx_dataset(images, labels, "images.gz", "labels.gz",
                                        mnist ? mnist_expectations() : IdxExpectations{});
    if (!has_consistent_shape(dataset)) __builtin_trap();
  } catch (const DataError& error) {
    fuzz::require_safe_message(error.what());
  }
  return 0;
}
