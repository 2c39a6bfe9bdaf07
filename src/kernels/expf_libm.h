// glibc's expf (its FMA build, the one glibc picks on any CPU with FMA) written out as
// branch-free code a loop can vectorise: libm's expf is a scalar call, one value at a
// time, and the softmax of a rebuilt window makes thousands of them per symbol. The same
// table, polynomial and operations (read from glibc 2.36's __expf_fma), so the same bits
// as std::exp; tests/kernels_forward_test.cpp holds it to that over a sweep of inputs.
//   x = (k + r) ln2 / 32, k integer, |r| <= 1/2:  exp(x) = 2^(k/32) 2^(r/32),
//   2^(k/32) from a 32-entry table and the exponent bits, 2^(r/32) by a cubic, in double.
// Only for builds with FMA (the avx2 and avx512 variants): without it the operations, and
// so the bits, would differ; the baseline variant calls std::exp.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>

namespace mg {
namespace expf_libm_detail {

// Bits of 2^(i/32), less i << 47 (added back from k's bits below). Internal linkage: each
// CPU variant's object keeps its own copy rather than sharing a weak symbol.
static constexpr uint64_t kTable[32] = {
    0x3ff0000000000000, 0x3fefd9b0d3158574, 0x3fefb5586cf9890f, 0x3fef9301d0125b51, 0x3fef72b83c7d517b,
    0x3fef54873168b9aa, 0x3fef387a6e756238, 0x3fef1e9df51fdee1, 0x3fef06fe0a31b715, 0x3feef1a7373aa9cb,
    0x3feedea64c123422, 0x3feece086061892d, 0x3feebfdad5362a27, 0x3feeb42b569d4f82, 0x3feeab07dd485429,
    0x3feea47eb03a5585, 0x3feea09e667f3bcd, 0x3fee9f75e8ec5f74, 0x3feea11473eb0187, 0x3feea589994cce13,
    0x3feeace5422aa0db, 0x3feeb737b0cdc5e5, 0x3feec49182a3f090, 0x3feed503b23e255d, 0x3feee89f995ad3ad,
    0x3feeff76f2fb5e47, 0x3fef199bdd85529c, 0x3fef3720dcef9069, 0x3fef5818dcfba487, 0x3fef7c97337b9b5f,
    0x3fefa4afa2a490da, 0x3fefd0765b6e4540};
inline constexpr double kInvLn2N = 0x1.71547652b82fep+5;  // 32 / ln 2
inline constexpr double kShift = 0x1.8p+52;               // adding it rounds to an integer, kept in the low bits
inline constexpr double kC0 = 0x1.c6af84b912394p-20, kC1 = 0x1.ebfce50fac4f3p-13, kC2 = 0x1.62e42ff0c52d6p-6;

}  // namespace expf_libm_detail

[[gnu::always_inline]] inline float expf_libm(float x) {
  using namespace expf_libm_detail;
  const double xd = x;
  const double shifted = std::fma(kInvLn2N, xd, kShift);  // k + kShift
  const uint64_t ki = std::bit_cast<uint64_t>(shifted);
  const double kd = shifted - kShift;
  const double r = std::fma(kInvLn2N, xd, -kd);  // x 32/ln2 - k
  const double s = std::bit_cast<double>(kTable[ki & 31] + (ki << 47));  // 2^(k/32)
  const double z = std::fma(kC0, r, kC1);
  const double r2 = r * r;
  const double y = std::fma(z, r2, std::fma(kC2, r, 1.0)) * s;
  // libm's own answers outside the table's range: overflow, underflow (exp(x) below
  // 2^-150 is 0; up to 2^-149 the smallest subnormal), NaN. Every candidate is computed
  // and one chosen by masks on bit patterns: a float comparison, or a result computed
  // only in a branch, may trap, which keeps GCC from vectorising the loop.
  const uint32_t bits = std::bit_cast<uint32_t>(x);
  const uint32_t table_result = std::bit_cast<uint32_t>(static_cast<float>(y));
  const uint32_t nan_result = std::bit_cast<uint32_t>(x + x);
  const auto mask = [](bool condition) { return 0u - static_cast<uint32_t>(condition); };
  const auto choose = [](uint32_t m, uint32_t a, uint32_t b) { return (a & m) | (b & ~m); };
  // For a negative bound c, x < c exactly when x's bits, read unsigned, exceed c's.
  const uint32_t below_subnormal = mask(bits > std::bit_cast<uint32_t>(-0x1.9d1d9ep6f));  // x < log(2^-149)
  const uint32_t below_zero = mask(bits > std::bit_cast<uint32_t>(-0x1.9fe368p6f));       // x < log(2^-150)
  const uint32_t above = mask(static_cast<int32_t>(bits) > std::bit_cast<int32_t>(0x1.62e42ep6f));  // x > log(2^128)
  const uint32_t nan = mask((bits & 0x7fffffffu) > 0x7f800000u);
  uint32_t result = choose(below_subnormal, 0x00000001u, table_result);  // 2^-149
  result = choose(below_zero, 0u, result);
  result = choose(above, 0x7f800000u, result);  // +inf
  return std::bit_cast<float>(choose(nan, nan_result, result));
}

}  // namespace mg
