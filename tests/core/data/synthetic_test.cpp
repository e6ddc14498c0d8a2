#include "core/data/synthetic.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

namespace pipelab {
namespace {

SyntheticOptions options_with(int64_t samples, int classes, int features, uint64_t seed = 1) {
  SyntheticOptions options;
  options.samples = samples;
  options.classes = classes;
  options.features = features;
  options.seed = seed;
  return options;
}

struct GeneratorCase {
  std::string source;
  int classes;   // requested
  int features;  // requested
  int expected_classes;
  int expected_features;
};

// Names the case in test listings (gtest would print its raw bytes).
void PrintTo(const GeneratorCase& c, std::ostream* out) { *out << c.source; }

class EverySyntheticSet : public ::testing::TestWithParam<GeneratorCase> {};

TEST_P(EverySyntheticSet, HasTheRightShapeAndLabels) {
  const GeneratorCase& c = GetParam();
  const Dataset dataset = make_synthetic(c.source, options_with(600, c.classes, c.features));
  EXPECT_EQ(dataset.samples, 600);
  EXPECT_EQ(dataset.features, c.expected_features);
  EXPECT_EQ(dataset.classes, c.expected_classes);
  EXPECT_TRUE(has_consistent_shape(dataset));
  EXPECT_EQ(dataset.name, c.source);
  for (float value : dataset.x) ASSERT_TRUE(std::isfinite(value));
  const auto counts = count_per_class(dataset);
  const double share = 600.0 / c.expected_classes;
  for (int64_t count : counts) {
    // Roughly balanced: the round-robin sets exactly, the teacher within a quarter.
    EXPECT_GT(count, 0.75 * share) << c.source;
    EXPECT_LT(count, 1.25 * share) << c.source;
  }
}

TEST_P(EverySyntheticSet, IsDeterministicPerSeed) {
  const GeneratorCase& c = GetParam();
  const Dataset a = make_synthetic(c.source, options_with(300, c.classes, c.features, 11));
  const Dataset b = make_synthetic(c.source, options_with(300, c.classes, c.features, 11));
  const Dataset other = make_synthetic(c.source, options_with(300, c.classes, c.features, 12));
  EXPECT_EQ(a.x, b.x);
  EXPECT_EQ(a.labels, b.labels);
  EXPECT_NE(a.x, other.x);
}

TEST_P(EverySyntheticSet, NoiseSpreadsThePoints) {
  const GeneratorCase& c = GetParam();
  SyntheticOptions quiet = options_with(300, c.classes, c.features, 4);
  quiet.noise = 0.0;
  SyntheticOptions noisy = quiet;
  noisy.noise = 0.5;
  const Dataset a = make_synthetic(c.source, quiet);
  const Dataset b = make_synthetic(c.source, noisy);
  if (c.source == "teacher") {
    // The teacher's noise is on its logits: the inputs stay, some labels change.
    EXPECT_EQ(a.x, b.x);
    EXPECT_NE(a.labels, b.labels);
  } else {
    EXPECT_NE(a.x, b.x);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Generators, EverySyntheticSet,
    ::testing::Values(GeneratorCase{"spiral", 5, 2, 5, 2}, GeneratorCase{"moons", 3, 2, 2, 2},
                      GeneratorCase{"circles", 3, 9, 2, 2}, GeneratorCase{"xor", 2, 2, 2, 2},
                      GeneratorCase{"blobs", 4, 7, 4, 7}, GeneratorCase{"teacher", 3, 12, 3, 12}),
    [](const auto& info) { return info.param.source; });

TEST(Synthetic, SpiralArmsStayInsideTheUnitDiskWithoutNoise) {
  SyntheticOptions options = options_with(400, 3, 2);
  options.noise = 0.0;
  const Dataset spiral = make_spiral(options);
  for (int64_t i = 0; i < spiral.samples; ++i) {
    const float* p = spiral.row(i);
    ASSERT_LE(std::hypot(p[0], p[1]), 1.0 + 1e-6);
  }
}

TEST(Synthetic, CirclesPutClassOneOnTheInnerRing) {
  SyntheticOptions options = options_with(200, 2, 2);
  options.noise = 0.0;
  const Dataset circles = make_circles(options);
  for (int64_t i = 0; i < circles.samples; ++i) {
    const float* p = circles.row(i);
    const double expected_radius = circles.labels[static_cast<size_t>(i)] == 0 ? 1.0 : 0.5;
    ASSERT_NEAR(std::hypot(p[0], p[1]), expected_radius, 1e-5);
  }
}

TEST(Synthetic, XorLabelsFollowTheQuadrantsWithoutNoise) {
  SyntheticOptions options = options_with(200, 2, 2);
  options.noise = 0.0;
  const Dataset xor_set = make_xor(options);
  for (int64_t i = 0; i < xor_set.samples; ++i) {
    const float* p = xor_set.row(i);
    const int expected = (p[0] > 0) != (p[1] > 0) ? 1 : 0;
    ASSERT_EQ(xor_set.labels[static_cast<size_t>(i)], expected);
  }
}

TEST(Synthetic, BlobsClusterAroundOneCentrePerClass) {
  SyntheticOptions options = options_with(400, 4, 3);
  options.noise = 0.05;
  const Dataset blobs = make_blobs(options);
  // Points of one class sit close to their class mean.
  for (int label = 0; label < 4; ++label) {
    std::vector<double> mean(3, 0.0);
    int count = 0;
    for (int64_t i = 0; i < blobs.samples; ++i) {
      if (blobs.labels[static_cast<size_t>(i)] != label) continue;
      for (int f = 0; f < 3; ++f) mean[f] += blobs.row(i)[f];
      ++count;
    }
    for (double& value : mean) value /= count;
    for (int64_t i = 0; i < blobs.samples; ++i) {
      if (blobs.labels[static_cast<size_t>(i)] != label) continue;
      for (int f = 0; f < 3; ++f) ASSERT_NEAR(blobs.row(i)[f], mean[f], 0.3);
    }
  }
}

TEST(Synthetic, TeacherKeepsItsNetworkWhateverTheSampleCount) {
  // The network and the samples come from separate streams: fewer samples are a prefix.
  const Dataset small = make_teacher(options_with(50, 4, 6, 9));
  const Dataset large = make_teacher(options_with(120, 4, 6, 9));
  EXPECT_TRUE(std::equal(small.x.begin(), small.x.end(), large.x.begin()));
  EXPECT_TRUE(std::equal(small.labels.begin(), small.labels.end(), large.labels.begin()));
}

TEST(Synthetic, TeacherScalesToWideInputsAndManyClasses) {
  const Dataset wide = make_teacher(options_with(500, 10, 256));
  EXPECT_EQ(wide.features, 256);
  EXPECT_EQ(wide.classes, 10);
  EXPECT_TRUE(has_consistent_shape(wide));
  const auto counts = count_per_class(wide);
  EXPECT_GT(*std::min_element(counts.begin(), counts.end()), 0);
}

TEST(Synthetic, TeacherWithZeroClassesIsARegressionSet) {
  const Dataset regression = make_teacher(options_with(200, 0, 5));
  EXPECT_FALSE(regression.is_classification());
  EXPECT_EQ(regression.target_width, 1);
  EXPECT_TRUE(regression.labels.empty());
  EXPECT_TRUE(has_consistent_shape(regression));
  const auto [low, high] =
      std::minmax_element(regression.targets.begin(), regression.targets.end());
  EXPECT_LT(*low, *high);  // targets vary with the input
}

TEST(Synthetic, BadParametersThrowNamingTheField) {
  auto message_of = [](const std::string& source, SyntheticOptions options) {
    try {
      make_synthetic(source, options);
    } catch (const DataError& error) {
      return std::string(error.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message_of("spiral", options_with(0, 3, 2)).find("data.samples"), std::string::npos);
  EXPECT_NE(message_of("spiral", options_with(10, 1, 2)).find("data.classes"), std::string::npos);
  EXPECT_NE(message_of("blobs", options_with(10, 3, 0)).find("data.features"), std::string::npos);
  EXPECT_NE(message_of("blobs", options_with(10, 0, 2)).find("data.classes"), std::string::npos);
  SyntheticOptions negative_noise = options_with(10, 3, 2);
  negative_noise.noise = -1.0;
  EXPECT_NE(message_of("moons", negative_noise).find("data.noise"), std::string::npos);
  EXPECT_NE(message_of("teacher", options_with(int64_t{1} << 40, 3, 4096)).find("too large"),
            std::string::npos);
  const std::string unknown = message_of("swirl", options_with(10, 3, 2));
  EXPECT_NE(unknown.find("swirl"), std::string::npos);
  EXPECT_NE(unknown.find("spiral"), std::string::npos);
}

TEST(Synthetic, SourceNamesAreRecognised) {
  for (const auto& name : synthetic_source_names()) EXPECT_TRUE(is_synthetic_source(name));
  EXPECT_FALSE(is_synthetic_source("mnist"));
}

}  // namespace
}  // namespace pipelab
