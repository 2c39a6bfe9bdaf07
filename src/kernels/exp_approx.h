// A branch-free exp for loops the compiler should vectorise: libm's expf is a scalar call,
// so a loop over it runs one value at a time.
//   exp(x) = 2^n exp(r), n = round(x / ln 2), |r| <= ln2/2, exp(r) by Cephes' degree-6
//   polynomial (about 1 ulp against expf).
// Valid for x in [-87, 0] (2^n stays a normal float); callers clamp to that range. A NaN
// comes out NaN. F is float (with I = int32_t) or a float vector type of kernels/cpu/simd.h
// (with I its int32_t vector), so one definition serves the scalar loops and the vector
// kernels. Always inlined: kernels/cpu/ compiles it for three instruction sets.
#pragma once

#include <bit>
#include <cstdint>

namespace mg {

template <class F = float, class I = int32_t>
[[gnu::always_inline]] inline F exp_approx(F x) {
  // 1.5 * 2^23 added and subtracted rounds x / ln 2 to the nearest integer, which then sits
  // in the low mantissa bits of `shifted` (read as an integer: no float-to-int conversion).
  constexpr float kRoundingShift = 12582912.0f;
  const F shifted = x * 1.44269504088896341f + kRoundingShift;
  const F n = shifted - kRoundingShift;
  const F r = (x - n * 0.693359375f) + n * 2.12194440e-4f;  // x - n ln2, ln2 split in two
  F p = r * 1.9875691500e-4f + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  const F exp_r = p * r * r + r + 1.0f;
  const I n_int = std::bit_cast<I>(shifted) - std::bit_cast<int32_t>(kRoundingShift);
  const F two_to_n = std::bit_cast<F>((n_int + 127) << 23);  // C++20: defined for any int
  return exp_r * two_to_n;
}

}  // namespace mg
