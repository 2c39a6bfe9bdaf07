// Exact (erf) GELU, element-wise: gelu(x) = x Phi(x), Phi the standard normal CDF.
//
// libm's erff and expf are scalar calls that the compiler cannot vectorise, and at the
// MLP's [B*T, 4D] they cost more than the MLP's GEMMs. So Phi and phi come from branch-free
// approximations that the compiler turns into vector loops, sharing one exp:
//   with z = |x| / sqrt 2 and E = exp(-z^2) (kernels/exp_approx.h, about 1 ulp),
//   phi(x) = E / sqrt(2 pi), and the lower tail Phi(-|x|) = erfc(z) / 2 = t Q(t) E / 2 with
//   t = 1 / (1 + z/2) and Q a degree-8 polynomial fitted by scripts/fit_gelu_tail.py
//   (within 2e-7 of erfc(z) exp(z^2) / t, relative, for every z), so the lower tail keeps
//   its relative accuracy.
// Against erf in double the results are within 4e-7 absolute over [-20, 20], better than
// 0.5 x (1 + std::erf(x / sqrt2)) in float; the tests hold every pass to that.
#include "kernels/cpu/variant.h"
#include "kernels/exp_approx.h"
#include "kernels/parallel.h"

#include <bit>
#include <cmath>
#include <cstdint>

namespace mg {
namespace {

constexpr float kInvSqrt2 = 0.70710678118654752f;
constexpr float kInvSqrt2Pi = 0.39894228040143268f;  // 1 / sqrt(2 pi)

// Q(t) = sum_i kTail[i] (t - kTailCentre)^i (scripts/fit_gelu_tail.py, degree 8).
constexpr float kTailCentre = 5.909090909e-01f;
constexpr float kTail[] = {5.779770584e-01f, 7.918516675e-01f,  5.894934732e-01f,
                           7.626127088e-02f, -2.058763955e-01f, -4.513340739e-02f,
                           1.123457050e-01f, 5.437814716e-03f,  -5.886534445e-02f};

// min(v, cap) for v >= 0 (or NaN), on the bit patterns: non-negative floats order like their
// bits read as integers, and an integer min vectorises where GCC will not if-convert a
// float select that feeds more arithmetic.
inline float min_nonnegative(float v, float cap) {
  const int32_t a = std::bit_cast<int32_t>(v), b = std::bit_cast<int32_t>(cap);
  return std::bit_cast<float>(a < b ? a : b);
}

struct Normal {
  float cdf;  // Phi(x)
  float pdf;  // phi(x)
};

// Phi(x) and phi(x) through erfc(|x| / sqrt 2). |x| / sqrt 2 is capped at 9, where erfc is
// 4e-37: beyond it Phi is 0 or 1 to float precision, and phi below 3e-36.
inline Normal normal(float x) {
  const float z = min_nonnegative(std::abs(x) * kInvSqrt2, 9.0f);
  const float t = 1.0f / (1.0f + 0.5f * z);
  const float s = t - kTailCentre;
  float q = kTail[8];
  for (int i = 7; i >= 0; --i) q = q * s + kTail[i];
  const float e = exp_approx(-z * z);         // exp(-x^2 / 2)
  const float lower_tail = 0.5f * t * q * e;  // erfc(z) / 2 = Phi(-|x|)
  // Phi(x) = lower_tail for x < 0, else 1 - lower_tail: arithmetic on a 0/1 step rather
  // than a select of two expressions keeps the loop branch-free and the lower tail exact.
  const float step = x < 0.0f ? 0.0f : 1.0f;
  return {lower_tail + step * (1.0f - 2.0f * lower_tail), kInvSqrt2Pi * e};
}

inline float normal_cdf(float x) { return normal(x).cdf; }

// d/dx [x Phi(x)] = Phi(x) + x phi(x).
inline float gelu_slope(float x) {
  const Normal n = normal(x);
  return n.cdf + x * n.pdf;
}

}  // namespace

// Below kParallelWork no OpenMP region at all: entering one, even on one thread, costs
// more than the decoder's rows of one position.
template <>
void Kernels::gelu_forward(float* out, const float* x, int64_t n) {
  if (n <= kParallelWork) {
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) out[i] = x[i] * normal_cdf(x[i]);
    return;
  }
#pragma omp parallel for simd
  for (int64_t i = 0; i < n; ++i) out[i] = x[i] * normal_cdf(x[i]);
}

// Both at once: each x read once, Phi(x) computed once. x is read before slope is written,
// so slope may alias x.
template <>
void Kernels::gelu_forward_with_slope(float* out, float* slope, const float* x, int64_t n) {
#pragma omp parallel for simd if (parallel : n > kParallelWork)
  for (int64_t i = 0; i < n; ++i) {
    const float xi = x[i];
    const Normal n = normal(xi);
    out[i] = xi * n.cdf;
    slope[i] = n.cdf + xi * n.pdf;
  }
}

template <>
void Kernels::gelu_backward(float* dx, const float* dout, const float* x, int64_t n, bool accumulate) {
  if (accumulate) {
#pragma omp parallel for simd if (parallel : n > kParallelWork)
    for (int64_t i = 0; i < n; ++i) dx[i] += dout[i] * gelu_slope(x[i]);
    return;
  }
#pragma omp parallel for simd if (parallel : n > kParallelWork)
  for (int64_t i = 0; i < n; ++i) dx[i] = dout[i] * gelu_slope(x[i]);
}

}  // namespace mg
