// The packed matrix-vector kernel (packed_linear.h): one panel [in, padded] of up to 64
// outputs against rows of x. A block of R rows keeps its R x NV vectors of sums in
// registers while the panel is walked front to back, so each panel row loaded serves R
// rows (the GEMM shape of a prompt or a rebuilt window); one row alone is the matrix-vector
// product of a generation step. Every output is bias + x[0] w[0] + x[1] w[1] + ... in that
// order, one fused multiply-add per term, whatever R, so a row's bits do not depend on
// how many rows come with it.
//
// Vectors: 16 floats (AVX-512, masked loads and stores for a partial last vector, so
// nothing past `valid` is read), else 8 floats through GCC's vector type (one AVX register,
// two SSE ones on the baseline build), reading up to valid rounded up to 8.
#include "kernels/cpu/variant.h"

#if defined(__FMA__) || defined(__AVX512F__)
#include <immintrin.h>
#endif

namespace mg {
namespace {

#if defined(__AVX512F__)
constexpr int64_t kLanes = 16;
constexpr int kAccumulators = 24;  // of 32 vector registers: the rest hold a panel row and x
using Vec = __m512;
using Mask = __mmask16;
inline Mask lanes_mask(int64_t lanes) { return lanes >= kLanes ? Mask(0xffff) : Mask((1u << lanes) - 1u); }
inline Vec load(const float* p, Mask m) { return _mm512_maskz_loadu_ps(m, p); }
// p[lanes of m] = v, or += v with accumulate.
inline void store(float* p, Vec v, Mask m, bool accumulate) {
  _mm512_mask_storeu_ps(p, m, accumulate ? _mm512_add_ps(load(p, m), v) : v);
}
inline Vec broadcast(float v) { return _mm512_set1_ps(v); }
inline Vec multiply_add(Vec x, Vec w, Vec acc) { return _mm512_fmadd_ps(x, w, acc); }
#else
constexpr int64_t kLanes = 8;
#if defined(__AVX2__)
constexpr int kAccumulators = 12;  // of 16 vector registers
#else
constexpr int kAccumulators = 4;  // each vector is two of the 16 SSE registers
#endif
// 8 floats; aligned(4) lets a load or store through it touch any float address.
typedef float Vec __attribute__((vector_size(32), aligned(4), may_alias));
using Mask = int64_t;  // lanes to store; loads read all 8
inline Mask lanes_mask(int64_t lanes) { return lanes; }
inline Vec load(const float* p, Mask) { return *reinterpret_cast<const Vec*>(p); }
// p[0..lanes) = v, or += v with accumulate; a partial vector touches only its lanes of p.
inline void store(float* p, Vec v, Mask lanes, bool accumulate) {
  if (lanes >= kLanes) {
    Vec* out = reinterpret_cast<Vec*>(p);
    *out = accumulate ? *out + v : v;
  } else {
    for (int64_t l = 0; l < lanes; ++l) p[l] = accumulate ? p[l] + v[l] : v[l];
  }
}
inline Vec broadcast(float v) { return Vec{} + v; }
inline Vec multiply_add(Vec x, Vec w, Vec acc) {
#ifdef __FMA__
  return reinterpret_cast<Vec>(_mm256_fmadd_ps(reinterpret_cast<__m256>(x), reinterpret_cast<__m256>(w),
                                                reinterpret_cast<__m256>(acc)));
#else
  return acc + x * w;
#endif
}
#endif

// R rows against the panel: y[r, 0..valid) (+)= bias + sum_i x[r, i] panel[i, .], panel
// rows ld apart, valid in (kLanes (NV-1), kLanes NV].
template <int NV, int R>
void panel_block(float* y, int64_t ldy, const float* x, int64_t ldx, const float* panel, int64_t ld,
                 const float* bias, int64_t in, int64_t valid, bool accumulate) {
  const Mask full = lanes_mask(kLanes), last = lanes_mask(valid - kLanes * (NV - 1));
  // Every index into acc is a constant after unrolling, so the sums live in registers.
  Vec acc[R][NV];
#pragma GCC unroll 8
  for (int v = 0; v < NV; ++v) {
    const Vec b = load(bias + kLanes * v, v + 1 == NV ? last : full);
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) acc[r][v] = b;
  }
  for (int64_t i = 0; i < in; ++i) {
    const float* w = panel + i * ld;  // [padded]
    Vec wv[NV];
#pragma GCC unroll 8
    for (int v = 0; v < NV; ++v) wv[v] = load(w + kLanes * v, v + 1 == NV ? last : full);
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      const Vec xi = broadcast(x[r * ldx + i]);
#pragma GCC unroll 8
      for (int v = 0; v < NV; ++v) acc[r][v] = multiply_add(xi, wv[v], acc[r][v]);
    }
  }
  // The layer's output is added to y after it is complete, as (x + (x W^T + b)) reads.
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
#pragma GCC unroll 8
    for (int v = 0; v < NV; ++v) store(y + r * ldy + kLanes * v, acc[r][v], v + 1 == NV ? last : full, accumulate);
  }
}

// Blocks of R rows, as many as the registers hold, then the rest as one smaller block.
template <int NV, int R>
void panel_rows(float* y, int64_t ldy, const float* x, int64_t ldx, int64_t rows, const float* panel,
                int64_t ld, const float* bias, int64_t in, int64_t valid, bool accumulate) {
  int64_t r = 0;
  for (; r + R <= rows; r += R)
    panel_block<NV, R>(y + r * ldy, ldy, x + r * ldx, ldx, panel, ld, bias, in, valid, accumulate);
  if constexpr (R > 1)
    if (r < rows)
      panel_rows<NV, R - 1>(y + r * ldy, ldy, x + r * ldx, ldx, rows - r, panel, ld, bias, in, valid, accumulate);
}

template <int NV>
constexpr int kBlockRows = kAccumulators / NV > 6 ? 6 : (kAccumulators / NV < 1 ? 1 : kAccumulators / NV);

}  // namespace

template <>
void Kernels::matvec_panel(float* y, int64_t ldy, const float* x, int64_t ldx, int64_t rows, const float* panel,
                           int64_t ld, const float* bias, int64_t in, int64_t valid, bool accumulate) {
  switch ((valid + kLanes - 1) / kLanes) {  // vectors of sums per row
    case 1: return panel_rows<1, kBlockRows<1>>(y, ldy, x, ldx, rows, panel, ld, bias, in, valid, accumulate);
    case 2: return panel_rows<2, kBlockRows<2>>(y, ldy, x, ldx, rows, panel, ld, bias, in, valid, accumulate);
    case 3: return panel_rows<3, kBlockRows<3>>(y, ldy, x, ldx, rows, panel, ld, bias, in, valid, accumulate);
#if !defined(__AVX512F__)
    case 4: return panel_rows<4, kBlockRows<4>>(y, ldy, x, ldx, rows, panel, ld, bias, in, valid, accumulate);
    case 5: return panel_rows<5, kBlockRows<5>>(y, ldy, x, ldx, rows, panel, ld, bias, in, valid, accumulate);
    case 6: return panel_rows<6, kBlockRows<6>>(y, ldy, x, ldx, rows, panel, ld, bias, in, valid, accumulate);
    case 7: return panel_rows<7, kBlockRows<7>>(y, ldy, x, ldx, rows, panel, ld, bias, in, valid, accumulate);
    default: return panel_rows<8, kBlockRows<8>>(y, ldy, x, ldx, rows, panel, ld, bias, in, valid, accumulate);
#else
    default: return panel_rows<4, kBlockRows<4>>(y, ldy, x, ldx, rows, panel, ld, bias, in, valid, accumulate);
#endif
  }
}

}  // namespace mg
