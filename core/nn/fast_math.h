// A branch-free float tanh (and, further down, exp) for elementwise kernels,
// written so GCC vectorises the loops that use them on baseline x86-64 (SSE2)
// without -ffast-math.
//
//   tanh(x) ~ c P(s) / Q(s),  c = x clamped to [-10, 10],  s = c^2,
//   P(s) = 1 + p1 s + ... + p5 s^5,  Q(s) = 1 + q1 s + ... + q4 s^4
//
// an odd rational of degree 11 over degree 8 in c. The coefficients are our
// own near-minimax fit of the absolute error |c P/Q - tanh c| on [0, 10], with
// P(0) = Q(0) = 1 pinned (so tanh(x) = x to the last bit for tiny x): Lawson's
// iteratively reweighted linearised least squares, c P(s) - tanh(c) Q(s) = 0
// on 6000 Chebyshev points of [0, 10], weighted by 1/|Q| of the previous
// iterate, in double. The fit's max error is 3.9e-9.
//
// P and Q are evaluated in double (2 lanes per SSE2 register) and the ratio
// rounded once to float: over every finite float the max abs error against
// tanh in double is 3.4e-8 (about half an ulp of 1), and the result is within
// 2 ulps of glibc's tanhf (tests/core/nn/fast_math_test.cpp sweeps densely).
// Evaluating in float instead is about 1.7x faster but some 10x less accurate
// (about 4e-7), which GELU's backward multiplies by up to about 10 through
// 1 - tanh^2.
//
// The clamp is at 10, not 9: tanh(9) rounds to 0.99999994 in float, and a
// kernel that uses 1 - t^2 (GELU's backward) must get exactly 0 for every
// large input, or that 1.2e-7 times a factor growing like x^3 becomes a
// visible error. The result is exactly +-1 from |x| = 9.07 on (tanhf's from
// 9.011; in between the two differ by one ulp). +-inf give +-1; a NaN
// propagates (see tanh_clamp).
//
// Vectorising: GCC turns `a > b ? b : a` into a vector select, but when the
// same loop then does arithmetic on the clamped value, partial redundancy
// elimination folds that arithmetic on the constant arm and leaves the rest
// on the other arm alone; with -ftrapping-math (the default) the loop cannot
// then be if-converted and is left scalar. So a vectorised kernel clamps in
// one loop (tanh_clamp, into a small buffer) and evaluates in the next
// (tanh_rational); fast_tanh composes the two for scalar use.
#pragma once

#include <cstring>

// The CUDA kernels use the same tanh (gpu/kernels/activation_math.h), so
// the GPU's GELU equals the CPU's: callable from host and device code.
#if defined(__CUDACC__)
#define PIPELAB_FAST_MATH_FN __host__ __device__ inline
#else
#define PIPELAB_FAST_MATH_FN inline
#endif

// PIPELAB_VECTOR_CLONES on a hot elementwise kernel has GCC compile it twice,
// for baseline x86-64 and for AVX2, and pick the AVX2 copy at load time where
// the CPU has it: the build stays portable while the vectorised loops run
// 8 floats (4 doubles) wide instead of 4 (2), as PyTorch's dispatched kernels
// do. AVX2 without FMA, and with -ffp-contract=off (ISO C++), so both copies
// round every operation the same way and give bit-identical results.
// Functions the clone inlines are compiled for AVX2 inside it. Off under
// ThreadSanitizer and AddressSanitizer: the load-time choice runs as an ifunc
// resolver, before their runtimes start.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__CUDACC__) && \
    !defined(__SANITIZE_THREAD__) && !defined(__SANITIZE_ADDRESS__)
#define PIPELAB_VECTOR_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define PIPELAB_VECTOR_CLONES
#endif

namespace pipelab {

inline constexpr float kFastTanhClamp = 10.0f;

// x clamped to [-10, 10]; NaN stays NaN (both comparisons are false for it).
PIPELAB_FAST_MATH_FN float tanh_clamp(float x) {
  const float c = x > kFastTanhClamp ? kFastTanhClamp : x;
  return c < -kFastTanhClamp ? -kFastTanhClamp : c;
}

// tanh(c) for c already in [-10, 10] (or NaN).
PIPELAB_FAST_MATH_FN float tanh_rational(float c_float) {
  constexpr double p1 = 0.13631791792441314;
  constexpr double p2 = 0.0038083040386079126;
  constexpr double p3 = 2.6815835290459213e-05;
  constexpr double p4 = 2.7811755620537723e-08;
  constexpr double p5 = -1.0245113823013414e-11;
  constexpr double q1 = 0.4696512185264631;
  constexpr double q2 = 0.027025430809569713;
  constexpr double q3 = 0.00038334626472481126;
  constexpr double q4 = 1.205282308633443e-06;
  const double c = c_float;
  const double s = c * c;
  const double p = 1.0 + s * (p1 + s * (p2 + s * (p3 + s * (p4 + s * p5))));
  const double q = 1.0 + s * (q1 + s * (q2 + s * (q3 + s * q4)));
  return static_cast<float>(c * p / q);
}

PIPELAB_FAST_MATH_FN float fast_tanh(float x) { return tanh_rational(tanh_clamp(x)); }

// A float exp for softmax, vectorised like the tanh above (clamp in one loop,
// evaluate in the next). With n = round(x / ln 2) and r = x - n ln 2 (ln 2 in
// two parts, Cody and Waite, so r is exact to float precision), |r| <= ln(2) / 2
// and exp(x) = 2^n exp(r): exp(r) is its Taylor polynomial of degree 7
// (truncation error below 6e-9 relative), 2^n is built in the exponent bits.
// Within 1 ulp (1e-7 relative) of exp over the clamp range
// (tests/core/nn/activations_test.cpp).
inline constexpr float kFastExpLow = -87.0f;  // exp(-87) ~ 1.6e-38, still a normal float
inline constexpr float kFastExpHigh = 88.0f;  // exp(88) ~ 1.7e38 < FLT_MAX

// x clamped to [-87, 88]; NaN stays NaN.
PIPELAB_FAST_MATH_FN float exp_clamp(float x) {
  const float c = x > kFastExpHigh ? kFastExpHigh : x;
  return c < kFastExpLow ? kFastExpLow : c;
}

// exp(c) for c already in [-87, 88].
PIPELAB_FAST_MATH_FN float exp_reduced(float c) {
  constexpr float kLog2e = 1.44269504088896341f;
  constexpr float kRound = 12582912.0f;           // 1.5 * 2^23: adding it rounds to an integer
  constexpr float kLn2High = 0.693145751953125f;  // 15 bits: n * kLn2High is exact
  constexpr float kLn2Low = 1.428606765330187e-06f;
  const float n = (c * kLog2e + kRound) - kRound;
  const float r = (c - n * kLn2High) - n * kLn2Low;
  const float p =
      1.0f +
      r * (1.0f +
           r * (1.0f / 2 +
                r * (1.0f / 6 +
                     r * (1.0f / 24 + r * (1.0f / 120 + r * (1.0f / 720 + r * (1.0f / 5040)))))));
  // 2^n for n in [-126, 127]: the biased exponent n + 127 in bits 23 to 30. A NaN
  // input gives a NaN n, which may not be converted to int (undefined); p is NaN
  // then, and so is the result, whatever 2^n is taken as.
  const float n_or_zero = n == n ? n : 0.0f;
  const int bits = (static_cast<int>(n_or_zero) + 127) << 23;
  float two_to_n;
  std::memcpy(&two_to_n, &bits, sizeof two_to_n);  // a bit cast the vectoriser keeps
  return p * two_to_n;
}

PIPELAB_FAST_MATH_FN float fast_exp(float x) { return exp_reduced(exp_clamp(x)); }

}  // namespace pipelab
