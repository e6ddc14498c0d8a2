// Rng: a small seeded random generator whose output is the same on every
// platform and standard library (std::normal_distribution and friends are not:
// their algorithms are left to each library). xoshiro256** seeded through
// splitmix64, with Box-Muller for normal samples.
#pragma once

#include <cstdint>
#include <vector>

namespace pipelab {

// One step of splitmix64: advances `state` and returns a well-mixed value.
uint64_t splitmix64_next(uint64_t& state);

class Rng {
 public:
  // `stream` separates independent sequences drawn from one seed (for example
  // a generator's parameters and its samples), so changing how many values one
  // of them draws does not shift the other.
  explicit Rng(uint64_t seed, uint64_t stream = 0);

  uint64_t next_u64();
  double uniform();                         // in [0, 1)
  double uniform(double low, double high);  // in [low, high)
  uint64_t below(uint64_t bound);           // in [0, bound), unbiased; bound > 0
  double normal();                          // standard normal (mean 0, deviation 1)

 private:
  uint64_t state_[4];
  double spare_normal_ = 0.0;  // Box-Muller makes normals in pairs
  bool has_spare_normal_ = false;
};

// A uniformly random permutation of 0..count-1 (Fisher-Yates).
std::vector<int64_t> random_permutation(int64_t count, Rng& rng);

}  // namespace pipelab
