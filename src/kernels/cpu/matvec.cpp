// The packed matrix-vector kernel (packed_linear.h): one panel [in, padded] of up to 64
// outputs against rows of x. A row's 8 x NV sums stay in registers while the panel is
// walked front to back; GCC's vector type holds 8 floats, one AVX register (two SSE ones
// on the baseline build). With FMA (x86-64-v3 and up) each step is one fused multiply-add.
#include "kernels/cpu/variant.h"

#ifdef __FMA__
#include <immintrin.h>
#endif

namespace mg {
namespace {

constexpr int64_t kLanes = 8;  // floats per vector
// 8 floats; aligned(4) lets a load or store through it touch any float address.
typedef float Vec8 __attribute__((vector_size(32), aligned(4), may_alias));

inline Vec8 multiply_add(Vec8 x, Vec8 w, Vec8 acc) {
#ifdef __FMA__
  return reinterpret_cast<Vec8>(_mm256_fmadd_ps(reinterpret_cast<__m256>(x), reinterpret_cast<__m256>(w),
                                                reinterpret_cast<__m256>(acc)));
#else
  return acc + x * w;
#endif
}

// One row against the panel: y[0..valid) (+)= bias[0..8 NV) + sum_i x[i] panel[i, 0..8 NV),
// panel rows ld apart. Lanes past valid are computed from whatever the panel holds there
// and never stored.
template <int NV>
void panel_row(float* y, const float* x, const float* panel, int64_t ld, const float* bias, int64_t in,
               int64_t valid, bool accumulate) {
  // Every index into acc is a constant after unrolling, so the sums live in registers
  // (an index known only at run time would keep them in memory, stored every step).
  Vec8 acc[NV];
#pragma GCC unroll 8
  for (int v = 0; v < NV; ++v) acc[v] = *reinterpret_cast<const Vec8*>(bias + kLanes * v);
  for (int64_t i = 0; i < in; ++i) {
    const Vec8 xi = Vec8{} + x[i];  // broadcast
    const float* w = panel + i * ld;
#pragma GCC unroll 8
    for (int v = 0; v < NV; ++v) acc[v] = multiply_add(xi, *reinterpret_cast<const Vec8*>(w + kLanes * v), acc[v]);
  }
  // The layer's output is added to y after it is complete, as (x + (x W^T + b)) reads.
#pragma GCC unroll 8
  for (int v = 0; v < NV; ++v) {
    const int64_t lanes = valid - kLanes * v;  // outputs of this vector to write, if in 1..8
    float* yv = y + kLanes * v;
    if (lanes >= kLanes) {
      Vec8* out = reinterpret_cast<Vec8*>(yv);
      *out = accumulate ? *out + acc[v] : acc[v];
    } else {
      for (int64_t l = 0; l < lanes; ++l) yv[l] = accumulate ? yv[l] + acc[v][l] : acc[v][l];
    }
  }
}

template <int NV>
void panel_rows(float* y, int64_t ldy, const float* x, int64_t ldx, int64_t rows, const float* panel,
                int64_t ld, const float* bias, int64_t in, int64_t valid, bool accumulate) {
  for (int64_t r = 0; r < rows; ++r) panel_row<NV>(y + r * ldy, x + r * ldx, panel, ld, bias, in, valid, accumulate);
}

}  // namespace

template <>
void Kernels::matvec_panel(float* y, int64_t ldy, const float* x, int64_t ldx, int64_t rows, const float* panel,
                           int64_t ld, const float* bias, int64_t in, int64_t valid, bool accumulate) {
  switch ((valid + kLanes - 1) / kLanes) {  // vectors of 8 sums
    case 1: return panel_rows<1>(y, ldy, x, ldx, rows, panel, ld, bias, in, valid, accumulate);
    case 2: return panel_rows<2>(y, ldy, x, ldx, rows, panel, ld, bias, in, valid, accumulate);
    case 3: return panel_rows<3>(y, ldy, x, ldx, rows, panel, ld, bias, in, valid, accumulate);
    case 4: return panel_rows<4>(y, ldy, x, ldx, rows, panel, ld, bias, in, valid, accumulate);
    case 5: return panel_rows<5>(y, ldy, x, ldx, rows, panel, ld, bias, in, valid, accumulate);
    case 6: return panel_rows<6>(y, ldy, x, ldx, rows, panel, ld, bias, in, valid, accumulate);
    case 7: return panel_rows<7>(y, ldy, x, ldx, rows, panel, ld, bias, in, valid, accumulate);
    default: return panel_rows<8>(y, ldy, x, ldx, rows, panel, ld, bias, in, valid, accumulate);
  }
}

}  // namespace mg
