#include "core/data/idx_reader.h"

#include <algorithm>
#include <cstdio>
#include <limits>
#include <optional>

#include "core/data/file_bytes.h"
#include "core/text/quoted_excerpt.h"

namespace pipelab {

namespace {

constexpr uint8_t kUnsignedByteType = 0x08;
constexpr uint32_t kImagesMagic = 0x00000803;
constexpr uint32_t kLabelsMagic = 0x00000801;

uint32_t read_big_endian_u32(std::span<const uint8_t> bytes, size_t offset) {
  return (uint32_t{bytes[offset]} << 24) | (uint32_t{bytes[offset + 1]} << 16) |
         (uint32_t{bytes[offset + 2]} << 8) | uint32_t{bytes[offset + 3]};
}

std::string hex32(uint32_t value) {
  char text[16];
  std::snprintf(text, sizeof text, "0x%08X", value);
  return text;
}

std::string shape_text(std::span<const int64_t> shape) {
  std::string text;
  for (int64_t size : shape) {
    if (!text.empty()) text += 'x';
    text += std::to_string(size);
  }
  return text;
}

// Product of `factors`, or nothing when it does not fit in 64 bits.
std::optional<uint64_t> checked_product(std::span<const int64_t> factors) {
  uint64_t product = 1;
  for (int64_t factor : factors) {
    const auto value = static_cast<uint64_t>(factor);
    if (value != 0 && product > std::numeric_limits<uint64_t>::max() / value) return std::nullopt;
    product *= value;
  }
  return product;
}

struct IdxHeader {
  std::vector<int64_t> dims;
  size_t data_offset = 0;
};

// Checks the magic number and that the header fits; `expected_magic` says
// which kind of file the caller wants (images accept 2 or more dimensions).
// `name` is already escaped for messages (path_excerpt).
IdxHeader parse_header(std::span<const uint8_t> bytes, const std::string& name,
                       uint32_t expected_magic) {
  const bool want_images = expected_magic == kImagesMagic;
  if (bytes.empty()) throw DataError(name + ": file is empty");
  if (bytes.size() < 4) {
    throw DataError(name +
                    ": truncated: an IDX file starts with a 4-byte magic number but the "
                    "file holds " +
                    std::to_string(bytes.size()) + " bytes");
  }
  const uint32_t magic = read_big_endian_u32(bytes, 0);
  const uint8_t type = bytes[2];
  const int dimension_count = bytes[3];
  // The kind is written out at each throw, so the app's translation test sees its words.
  if (bytes[0] != 0 || bytes[1] != 0) {
    throw DataError(
        name + ": wrong magic number " + hex32(magic) + ": expected " + hex32(expected_magic) +
        (want_images ? " (IDX images of unsigned bytes)" : " (IDX labels of unsigned bytes)") +
        "; this is not an IDX file");
  }
  if (type != kUnsignedByteType) {
    throw DataError(
        name + ": wrong magic number " + hex32(magic) + ": expected " + hex32(expected_magic) +
        (want_images ? " (IDX images of unsigned bytes)" : " (IDX labels of unsigned bytes)") +
        "; values of type " + hex32(type) + " are not supported");
  }
  const bool dimensions_fit = want_images ? dimension_count >= 2 : dimension_count == 1;
  if (!dimensions_fit) {
    throw DataError(name + ": wrong magic number " + hex32(magic) + ": expected " +
                    hex32(expected_magic) +
                    (want_images ? " (IDX images of unsigned bytes); is this a labels file?"
                                 : " (IDX labels of unsigned bytes); is this an images file?"));
  }
  const size_t header_size = 4 + 4 * static_cast<size_t>(dimension_count);
  if (bytes.size() < header_size) {
    throw DataError(name + ": truncated: the header of a " + std::to_string(dimension_count) +
                    "-dimensional IDX file needs " + std::to_string(header_size) +
                    " bytes but the file holds " + std::to_string(bytes.size()));
  }
  IdxHeader header;
  header.data_offset = header_size;
  for (int d = 0; d < dimension_count; ++d) {
    header.dims.push_back(read_big_endian_u32(bytes, 4 + 4 * static_cast<size_t>(d)));
  }
  return header;
}

// Throws unless the data after the header is exactly `expected` bytes long.
// `name` is already escaped for messages.
void check_data_size(size_t available, std::optional<uint64_t> expected, const std::string& name,
                     const std::string& claim) {
  if (expected && *expected == available) return;
  if (!expected || *expected > available) {
    throw DataError(name + ": truncated: header says " + claim + " but the file holds " +
                    std::to_string(available) + (expected ? "" : " bytes of data"));
  }
  throw DataError(name + ": too long: header says " + claim + " but the file holds " +
                  std::to_string(available) + "; the file is damaged or not what it claims");
}

}  // namespace

int64_t IdxImages::pixels_per_image() const {
  int64_t product = 1;
  for (int64_t size : shape) product *= size;
  return product;
}

IdxImages parse_idx_images(std::span<const uint8_t> bytes, const std::string& path) {
  const std::string name = path_excerpt(path);
  const IdxHeader header = parse_header(bytes, name, kImagesMagic);
  IdxImages images;
  images.count = header.dims[0];
  images.shape.assign(header.dims.begin() + 1, header.dims.end());
  if (images.count == 0) throw DataError(name + ": header says 0 images; the file holds no data");
  if (std::find(images.shape.begin(), images.shape.end(), 0) != images.shape.end()) {
    throw DataError(name + ": header says images of " + shape_text(images.shape) +
                    " pixels, an empty shape");
  }
  const size_t available = bytes.size() - header.data_offset;
  const auto expected = checked_product(header.dims);
  std::string claim = std::to_string(images.count) + " images of " + shape_text(images.shape);
  if (expected) claim += " (" + std::to_string(*expected) + " bytes)";
  check_data_size(available, expected, name, claim);
  images.pixels.assign(bytes.begin() + static_cast<std::ptrdiff_t>(header.data_offset),
                       bytes.end());
  return images;
}

std::vector<uint8_t> parse_idx_labels(std::span<const uint8_t> bytes, const std::string& path) {
  const std::string name = path_excerpt(path);
  const IdxHeader header = parse_header(bytes, name, kLabelsMagic);
  const int64_t count = header.dims[0];
  if (count == 0) throw DataError(name + ": header says 0 labels; the file holds no data");
  const size_t available = bytes.size() - header.data_offset;
  check_data_size(available, static_cast<uint64_t>(count), name, std::to_string(count) + " labels");
  return {bytes.begin() + static_cast<std::ptrdiff_t>(header.data_offset), bytes.end()};
}

IdxImages read_idx_images(const std::string& path) {
  return parse_idx_images(read_file_bytes(path), path);
}

std::vector<uint8_t> read_idx_labels(const std::string& path) {
  return parse_idx_labels(read_file_bytes(path), path);
}

IdxExpectations mnist_expectations() {
  IdxExpectations expectations;
  expectations.image_shape = {28, 28};
  expectations.classes = 10;
  expectations.dataset_name = "MNIST";
  return expectations;
}

Dataset load_idx_pair(const std::string& images_path, const std::string& labels_path,
                      const IdxExpectations& expectations) {
  // Labels first: the smaller file, so a damaged one is reported before the big read.
  const std::vector<uint8_t> labels = read_idx_labels(labels_path);
  return idx_dataset(read_idx_images(images_path), labels, images_path, labels_path,
                     expectations);
}

Dataset idx_dataset(const IdxImages& images, const std::vector<uint8_t>& labels,
                    const std::string& images_path, const std::string& labels_path,
                    const IdxExpectations& expectations) {
  const std::string images_name = path_excerpt(images_path);
  const std::string labels_name = path_excerpt(labels_path);
  if (static_cast<int64_t>(labels.size()) != images.count) {
    throw DataError(labels_name + ": holds " + std::to_string(labels.size()) + " labels but " +
                    images_name + " holds " + std::to_string(images.count) +
                    " images; the two files must come from the same set");
  }
  if (!expectations.image_shape.empty() && images.shape != expectations.image_shape) {
    throw DataError(images_name + ": images are " + shape_text(images.shape) + " but " +
                    expectations.dataset_name + " images are " +
                    shape_text(expectations.image_shape));
  }
  int max_label = 0;
  for (size_t i = 0; i < labels.size(); ++i) {
    if (expectations.classes > 0 && labels[i] >= expectations.classes) {
      throw DataError(labels_name + ": label " + std::to_string(labels[i]) + " at index " +
                      std::to_string(i) + " is out of range: " + expectations.dataset_name +
                      " labels are 0.." + std::to_string(expectations.classes - 1));
    }
    max_label = std::max<int>(max_label, labels[i]);
  }

  Dataset dataset;
  dataset.samples = images.count;
  dataset.features = images.pixels_per_image();
  dataset.classes = expectations.classes > 0 ? expectations.classes : max_label + 1;
  dataset.labels.assign(labels.begin(), labels.end());
  dataset.x.resize(images.pixels.size());
  std::transform(images.pixels.begin(), images.pixels.end(), dataset.x.begin(),
                 [](uint8_t pixel) { return static_cast<float>(pixel) / 255.0f; });
  dataset.name = expectations.dataset_name;
  return dataset;
}

}  // namespace pipelab
