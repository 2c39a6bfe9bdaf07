// Exact (erf) GELU, element-wise: gelu(x) = x Phi(x), Phi the standard normal CDF.
//
// libm's erff and expf are scalar calls that the compiler cannot vectorise, and at the
// MLP's [B*T, 4D] they cost more than the MLP's GEMMs. So Phi is computed here from two
// branch-free approximations that the compiler turns into vector loops:
//   - erfc(z) ~ t exp(-z^2 + P(t)), t = 1/(1 + z/2), z >= 0 (Numerical Recipes, "erfcc"):
//     relative error below 1.2e-7 for every z, so the lower tail keeps its relative accuracy;
//   - exp by kernels/exp_approx.h (about 1 ulp).
// Against erf in double the result is within 4e-7 absolute over [-20, 20], better than
// 0.5 x (1 + std::erf(x / sqrt2)) in float; the tests hold both passes to that.
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

// min(v, cap) for v >= 0 (or NaN), on the bit patterns: non-negative floats order like their
// bits read as integers, and an integer min vectorises where GCC will not if-convert a
// float select that feeds more arithmetic.
inline float min_nonnegative(float v, float cap) {
  const int32_t a = std::bit_cast<int32_t>(v), b = std::bit_cast<int32_t>(cap);
  return std::bit_cast<float>(a < b ? a : b);
}

// Phi(x) = P(N(0,1) <= x) through erfc(|x| / sqrt 2). |x| / sqrt 2 is capped at 9, where
// erfc is 4e-37: beyond it Phi is 0 or 1 to float precision anyway.
inline float normal_cdf(float x) {
  const float z = min_nonnegative(std::abs(x) * kInvSqrt2, 9.0f);
  const float t = 1.0f / (1.0f + 0.5f * z);
  float p = 0.17087277f;
  p = p * t - 0.82215223f;
  p = p * t + 1.48851587f;
  p = p * t - 1.13520398f;
  p = p * t + 0.27886807f;
  p = p * t - 0.18628806f;
  p = p * t + 0.09678418f;
  p = p * t + 0.37409196f;
  p = p * t + 1.00002368f;
  p = p * t - 1.26551223f;
  const float lower_tail = 0.5f * t * exp_approx(p - z * z);  // erfc(z) / 2 = Phi(-|x|)
  // Phi(x) = lower_tail for x < 0, else 1 - lower_tail: arithmetic on a 0/1 step rather
  // than a select of two expressions keeps the loop branch-free and the lower tail exact.
  const float step = x < 0.0f ? 0.0f : 1.0f;
  return lower_tail + step * (1.0f - 2.0f * lower_tail);
}

// phi(x) = exp(-x^2 / 2) / sqrt(2 pi), x^2 capped at 170 (phi = 1e-38 there).
inline float normal_pdf(float x) { return kInvSqrt2Pi * exp_approx(-0.5f * min_nonnegative(x * x, 170.0f)); }

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
    const float xi = x[i], cdf = normal_cdf(xi);
    out[i] = xi * cdf;
    slope[i] = cdf + xi * normal_pdf(xi);
  }
}

// d/dx [x Phi(x)] = Phi(x) + x phi(x).
template <>
void Kernels::gelu_backward(float* dx, const float* dout, const float* x, int64_t n) {
#pragma omp parallel for simd if (parallel : n > kParallelWork)
  for (int64_t i = 0; i < n; ++i) dx[i] += dout[i] * (normal_cdf(x[i]) + x[i] * normal_pdf(x[i]));
}

template <>
void Kernels::gelu_backward_overwrite(float* dx, const float* dout, const float* x, int64_t n) {
#pragma omp parallel for simd if (parallel : n > kParallelWork)
  for (int64_t i = 0; i < n; ++i) dx[i] = dout[i] * (normal_cdf(x[i]) + x[i] * normal_pdf(x[i]));
}

}  // namespace mg
