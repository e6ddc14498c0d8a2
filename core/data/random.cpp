#include "core/data/random.h"

#include <cassert>
#include <cmath>
#include <numbers>

namespace pipelab {

uint64_t splitmix64_next(uint64_t& state) {
  state += 0x9E3779B97F4A7C15ull;
  uint64_t z = state;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

namespace {

uint64_t rotate_left(uint64_t value, int bits) { return (value << bits) | (value >> (64 - bits)); }

}  // namespace

Rng::Rng(uint64_t seed, uint64_t stream) {
  uint64_t stream_state = stream;
  uint64_t mixer = seed ^ splitmix64_next(stream_state);
  for (uint64_t& word : state_) word = splitmix64_next(mixer);
  // xoshiro must not start from all zeros; splitmix64 never yields four zeros in a row.
  assert((state_[0] | state_[1] | state_[2] | state_[3]) != 0);
}

uint64_t Rng::next_u64() {
  const uint64_t result = rotate_left(state_[1] * 5, 7) * 9;
  const uint64_t shifted = state_[1] << 17;
  state_[2] ^= state_[0];
  state_[3] ^= state_[1];
  state_[1] ^= state_[2];
  state_[0] ^= state_[3];
  state_[2] ^= shifted;
  state_[3] = rotate_left(state_[3], 45);
  return result;
}

double Rng::uniform() {
  // The top 53 bits fill a double's mantissa exactly.
  return static_cast<double>(next_u64() >> 11) * 0x1.0p-53;
}

double Rng::uniform(double low, double high) { return low + (high - low) * uniform(); }

uint64_t Rng::below(uint64_t bound) {
  assert(bound > 0);
  // Reject the few values that would make the remainder favour small numbers.
  const uint64_t threshold = (0 - bound) % bound;  // 2^64 mod bound
  for (;;) {
    const uint64_t value = next_u64();
    if (value >= threshold) return value % bound;
  }
}

double Rng::normal() {
  if (has_spare_normal_) {
    has_spare_normal_ = false;
    return spare_normal_;
  }
  const double u1 = 1.0 - uniform();  // in (0, 1]: log stays finite
  const double u2 = uniform();
  const double radius = std::sqrt(-2.0 * std::log(u1));
  const double angle = 2.0 * std::numbers::pi * u2;
  spare_normal_ = radius * std::sin(angle);
  has_spare_normal_ = true;
  return radius * std::cos(angle);
}

std::vector<int64_t> random_permutation(int64_t count, Rng& rng) {
  assert(count >= 0);
  std::vector<int64_t> order(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) order[static_cast<size_t>(i)] = i;
  for (int64_t i = count - 1; i > 0; --i) {
    const auto j = static_cast<int64_t>(rng.below(static_cast<uint64_t>(i) + 1));
    std::swap(order[static_cast<size_t>(i)], order[static_cast<size_t>(j)]);
  }
  return order;
}

}  // namespace pipelab
