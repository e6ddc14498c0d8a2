#include "core/data/synthetic.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <numbers>

#include "core/data/random.h"
#include "core/text/quoted_excerpt.h"

namespace pipelab {

namespace {

constexpr double kPi = std::numbers::pi;

// Random streams per generator and purpose, so that e.g. the teacher network
// stays the same whatever the sample count.
enum Stream : uint64_t {
  kSpiralStream = 101,
  kMoonsStream,
  kCirclesStream,
  kXorStream,
  kBlobCentersStream,
  kBlobSamplesStream,
  kTeacherNetworkStream,
  kTeacherSamplesStream,
  kTeacherCalibrationStream,
};

// Big enough for any lab experiment, small enough to fail fast instead of
// exhausting memory: 2^30 floats are 4 GiB.
constexpr int64_t kMaxValues = int64_t{1} << 30;
constexpr int kMaxClasses = 100000;

void check_common(const std::string& source, const SyntheticOptions& options, int64_t features) {
  if (options.samples < 1) {
    throw DataError(source + ": data.samples is " + std::to_string(options.samples) +
                    "; a synthetic set needs at least 1 sample");
  }
  if (!(options.noise >= 0.0) || !std::isfinite(options.noise)) {
    throw DataError(source + ": data.noise is " + std::to_string(options.noise) +
                    "; use a finite value >= 0");
  }
  if (options.samples > kMaxValues / features) {
    throw DataError(source + ": " + std::to_string(options.samples) + " samples x " +
                    std::to_string(features) + " features is too large (at most " +
                    std::to_string(kMaxValues) + " values); lower data.samples");
  }
}

void check_class_count(const std::string& source, int classes, bool allow_regression) {
  const bool regression = allow_regression && classes == 0;
  if (!regression && (classes < 2 || classes > kMaxClasses)) {
    throw DataError(source + ": data.classes is " + std::to_string(classes) + "; use 2.." +
                    std::to_string(kMaxClasses) +
                    (allow_regression ? " (or 0 for a regression set)" : ""));
  }
}

void check_feature_count(const std::string& source, int features) {
  if (features < 1) {
    throw DataError(source + ": data.features is " + std::to_string(features) + "; use at least 1");
  }
}

// An empty classification set with room for `samples` points of `features`.
Dataset empty_classification(const std::string& name, int64_t samples, int64_t features,
                             int classes) {
  Dataset dataset;
  dataset.name = name;
  dataset.samples = samples;
  dataset.features = features;
  dataset.classes = classes;
  dataset.x.reserve(static_cast<size_t>(samples * features));
  dataset.labels.reserve(static_cast<size_t>(samples));
  return dataset;
}

// Appends a 2-D point with Gaussian noise on each coordinate.
void add_point(Dataset& dataset, double x0, double x1, int label, double noise, Rng& rng) {
  dataset.x.push_back(static_cast<float>(x0 + noise * rng.normal()));
  dataset.x.push_back(static_cast<float>(x1 + noise * rng.normal()));
  dataset.labels.push_back(label);
}

}  // namespace

Dataset make_spiral(const SyntheticOptions& options) {
  check_common("spiral", options, 2);
  check_class_count("spiral", options.classes, false);
  const int arms = options.classes;
  constexpr double kTurns = 0.75;  // how far each arm winds from the centre to radius 1
  Rng rng(options.seed, kSpiralStream);
  Dataset dataset = empty_classification("spiral", options.samples, 2, arms);
  for (int64_t i = 0; i < options.samples; ++i) {
    const int arm = static_cast<int>(i % arms);  // round-robin keeps the classes balanced
    const double t = rng.uniform();              // position along the arm
    const double angle = 2.0 * kPi * (static_cast<double>(arm) / arms + kTurns * t);
    add_point(dataset, t * std::cos(angle), t * std::sin(angle), arm, options.noise, rng);
  }
  return dataset;
}

Dataset make_moons(const SyntheticOptions& options) {
  check_common("moons", options, 2);
  Rng rng(options.seed, kMoonsStream);
  Dataset dataset = empty_classification("moons", options.samples, 2, 2);
  for (int64_t i = 0; i < options.samples; ++i) {
    const int label = static_cast<int>(i % 2);
    const double angle = kPi * rng.uniform();
    // Upper moon centred at (0, 0), lower moon at (1, 0.5); then shift both so
    // the pair is centred on the origin.
    double x0 = std::cos(angle);
    double x1 = std::sin(angle);
    if (label == 1) {
      x0 = 1.0 - x0;
      x1 = 0.5 - x1;
    }
    add_point(dataset, x0 - 0.5, x1 - 0.25, label, options.noise, rng);
  }
  return dataset;
}

Dataset make_circles(const SyntheticOptions& options) {
  check_common("circles", options, 2);
  constexpr double kInnerRadius = 0.5;  // the outer circle has radius 1
  Rng rng(options.seed, kCirclesStream);
  Dataset dataset = empty_classification("circles", options.samples, 2, 2);
  for (int64_t i = 0; i < options.samples; ++i) {
    const int label = static_cast<int>(i % 2);  // 0: outer ring, 1: inner ring
    const double radius = label == 0 ? 1.0 : kInnerRadius;
    const double angle = 2.0 * kPi * rng.uniform();
    add_point(dataset, radius * std::cos(angle), radius * std::sin(angle), label, options.noise,
              rng);
  }
  return dataset;
}

Dataset make_xor(const SyntheticOptions& options) {
  check_common("xor", options, 2);
  Rng rng(options.seed, kXorStream);
  Dataset dataset = empty_classification("xor", options.samples, 2, 2);
  for (int64_t i = 0; i < options.samples; ++i) {
    const int label = static_cast<int>(i % 2);
    // Label 0 lives where both coordinates share a sign, label 1 where they differ.
    const double sign0 = rng.below(2) == 0 ? 1.0 : -1.0;
    const double sign1 = label == 0 ? sign0 : -sign0;
    const double x0 = sign0 * (1.0 - rng.uniform());  // magnitude in (0, 1]
    const double x1 = sign1 * (1.0 - rng.uniform());
    add_point(dataset, x0, x1, label, options.noise, rng);
  }
  return dataset;
}

Dataset make_blobs(const SyntheticOptions& options) {
  check_feature_count("blobs", options.features);
  check_common("blobs", options, options.features);
  check_class_count("blobs", options.classes, false);
  const int64_t features = options.features;
  const int classes = options.classes;

  // Cluster centres: standard normal in every dimension.
  Rng center_rng(options.seed, kBlobCentersStream);
  std::vector<double> centers(static_cast<size_t>(classes * features));
  for (double& value : centers) value = center_rng.normal();

  Rng rng(options.seed, kBlobSamplesStream);
  Dataset dataset = empty_classification("blobs", options.samples, features, classes);
  for (int64_t i = 0; i < options.samples; ++i) {
    const int label = static_cast<int>(i % classes);
    const double* center = centers.data() + label * features;
    for (int64_t f = 0; f < features; ++f) {
      dataset.x.push_back(static_cast<float>(center[f] + options.noise * rng.normal()));
    }
    dataset.labels.push_back(label);
  }
  return dataset;
}

namespace {

// The random 2-layer tanh network that labels the teacher set.
struct TeacherNetwork {
  int64_t inputs = 0;
  int64_t outputs = 0;
  std::vector<double> w1;           // hidden x inputs
  std::vector<double> w2;           // outputs x hidden
  std::vector<double> output_bias;  // outputs

  // Writes the network's outputs (logits) for `input` into `output`.
  void evaluate(const double* input, double* output) const {
    double activation[kTeacherHiddenWidth];
    for (int64_t h = 0; h < kTeacherHiddenWidth; ++h) {
      double sum = 0.0;
      for (int64_t f = 0; f < inputs; ++f) sum += w1[h * inputs + f] * input[f];
      activation[h] = std::tanh(sum);
    }
    for (int64_t o = 0; o < outputs; ++o) {
      double sum = output_bias[o];
      for (int64_t h = 0; h < kTeacherHiddenWidth; ++h) {
        sum += w2[o * kTeacherHiddenWidth + h] * activation[h];
      }
      output[o] = sum;
    }
  }
};

int64_t argmax(const double* values, int64_t count) {
  return std::max_element(values, values + count) - values;
}

// Random weights scaled by 1/sqrt(fan-in) so pre-activations are about unit
// size whatever the width.
TeacherNetwork random_teacher(int64_t inputs, int64_t outputs, uint64_t seed) {
  TeacherNetwork network;
  network.inputs = inputs;
  network.outputs = outputs;
  network.w1.resize(static_cast<size_t>(kTeacherHiddenWidth * inputs));
  network.w2.resize(static_cast<size_t>(outputs * kTeacherHiddenWidth));
  network.output_bias.assign(static_cast<size_t>(outputs), 0.0);
  Rng rng(seed, kTeacherNetworkStream);
  for (double& w : network.w1) w = rng.normal() / std::sqrt(static_cast<double>(inputs));
  for (double& w : network.w2) w = rng.normal() / std::sqrt(double{kTeacherHiddenWidth});
  return network;
}

// A random network's argmax can favour a few classes (badly so for few inputs
// and many classes). Tune the output biases on a calibration sample until every
// class wins about equally often: a nudge up for classes that win too rarely,
// down for those that win too often.
void balance_classes(TeacherNetwork& network, uint64_t seed) {
  const int64_t classes = network.outputs;
  constexpr int64_t calibration_samples = 4096;  // shares within about 1% of the target
  constexpr int kRounds = 200;
  Rng rng(seed, kTeacherCalibrationStream);
  std::vector<double> logits(static_cast<size_t>(calibration_samples * classes));
  std::vector<double> input(static_cast<size_t>(network.inputs));
  for (int64_t i = 0; i < calibration_samples; ++i) {
    for (double& value : input) value = static_cast<float>(rng.normal());
    network.evaluate(input.data(), logits.data() + i * classes);
  }
  const double target = 1.0 / static_cast<double>(classes);
  std::vector<int64_t> wins(static_cast<size_t>(classes));
  for (int round = 0; round < kRounds; ++round) {
    std::fill(wins.begin(), wins.end(), 0);
    for (int64_t i = 0; i < calibration_samples; ++i) {
      const double* sample_logits = logits.data() + i * classes;
      int64_t best = 0;
      for (int64_t c = 1; c < classes; ++c) {
        if (sample_logits[c] + network.output_bias[c] >
            sample_logits[best] + network.output_bias[best]) {
          best = c;
        }
      }
      ++wins[best];
    }
    const double step = 0.05 / (1.0 + round / 20.0);  // shrinking steps settle the biases
    for (int64_t c = 0; c < classes; ++c) {
      const double share = static_cast<double>(wins[c]) / calibration_samples;
      network.output_bias[c] += step * (target - share) / target;
    }
  }
}

}  // namespace

Dataset make_teacher(const SyntheticOptions& options) {
  check_feature_count("teacher", options.features);
  check_common("teacher", options, options.features);
  check_class_count("teacher", options.classes, true);
  const bool regression = options.classes == 0;
  const int64_t inputs = options.features;
  const int64_t outputs = regression ? 1 : options.classes;

  TeacherNetwork network = random_teacher(inputs, outputs, options.seed);
  if (!regression) balance_classes(network, options.seed);

  Dataset dataset;
  dataset.name = "teacher";
  dataset.samples = options.samples;
  dataset.features = inputs;
  dataset.classes = options.classes;
  dataset.target_width = regression ? 1 : 0;
  dataset.x.resize(static_cast<size_t>(options.samples * inputs));
  if (regression) {
    dataset.targets.resize(static_cast<size_t>(options.samples));
  } else {
    dataset.labels.resize(static_cast<size_t>(options.samples));
  }

  Rng rng(options.seed, kTeacherSamplesStream);
  std::vector<double> input(static_cast<size_t>(inputs));
  std::vector<double> output(static_cast<size_t>(outputs));
  for (int64_t i = 0; i < options.samples; ++i) {
    for (int64_t f = 0; f < inputs; ++f) {
      const float value = static_cast<float>(rng.normal());
      dataset.x[static_cast<size_t>(i * inputs + f)] = value;
      input[static_cast<size_t>(f)] = value;  // the teacher sees exactly the stored input
    }
    network.evaluate(input.data(), output.data());
    for (double& value : output) value += options.noise * rng.normal();
    if (regression) {
      dataset.targets[static_cast<size_t>(i)] = static_cast<float>(output[0]);
    } else {
      dataset.labels[static_cast<size_t>(i)] = static_cast<int32_t>(argmax(output.data(), outputs));
    }
  }
  return dataset;
}

std::vector<std::string> synthetic_source_names() {
  return {"spiral", "moons", "circles", "xor", "blobs", "teacher"};
}

bool is_synthetic_source(const std::string& source) {
  const auto names = synthetic_source_names();
  return std::find(names.begin(), names.end(), source) != names.end();
}

Dataset make_synthetic(const std::string& source, const SyntheticOptions& options) {
  if (source == "spiral") return make_spiral(options);
  if (source == "moons") return make_moons(options);
  if (source == "circles") return make_circles(options);
  if (source == "xor") return make_xor(options);
  if (source == "blobs") return make_blobs(options);
  if (source == "teacher") return make_teacher(options);
  std::string valid;
  for (const auto& name : synthetic_source_names()) valid += (valid.empty() ? "" : ", ") + name;
  throw DataError("unknown synthetic data set " + quoted_excerpt(source) + ": valid ones are " +
                  valid);
}

}  // namespace pipelab
