// Synthetic data sets generated from a seed: the same options give the same
// samples on every platform (see random.h). Each generator's shape and
// parameters are described in datasets/README.md.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/data/dataset.h"

namespace pipelab {

struct SyntheticOptions {
  int64_t samples = 2048;  // how many samples in total (before any train/validation split)
  int classes = 3;   // spiral, blobs, teacher (teacher: 0 = regression); the 2-class sets ignore it
  int features = 2;  // blobs, teacher: input width; the 2-D sets ignore it
  double noise = 0.1;  // standard deviation of the Gaussian noise (teacher: on the logits)
  uint64_t seed = 1;
};

// The 2-D sets: every one has features == 2.
Dataset make_spiral(const SyntheticOptions& options);  // `classes` arms winding out from the origin
Dataset make_moons(const SyntheticOptions& options);   // two interleaved half circles, 2 classes
Dataset make_circles(const SyntheticOptions& options);  // a ring inside a ring, 2 classes
Dataset make_xor(const SyntheticOptions& options);      // quadrants: label = sign(x0) != sign(x1)

// Gaussian clusters in `features` dimensions, one per class.
Dataset make_blobs(const SyntheticOptions& options);

// Gaussian inputs labelled by a random 2-layer tanh network (the "teacher"):
// label = argmax of its logits (plus noise). With classes == 0 it is a
// regression set instead: one target per sample, the teacher's single output
// plus noise. Scales to any width, so it is the set for benchmarks.
Dataset make_teacher(const SyntheticOptions& options);

// Hidden width of the teacher network.
constexpr int kTeacherHiddenWidth = 32;

// The synthetic source names, in the order the UI lists them:
// spiral, moons, circles, xor, blobs, teacher.
std::vector<std::string> synthetic_source_names();
bool is_synthetic_source(const std::string& source);

// Dispatches on a name from synthetic_source_names(). Throws DataError for an
// unknown name or options out of range (samples < 1, noise < 0, ...).
Dataset make_synthetic(const std::string& source, const SyntheticOptions& options);

}  // namespace pipelab
