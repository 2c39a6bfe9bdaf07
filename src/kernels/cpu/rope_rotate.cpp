// Rotary position embedding's rotation (rope.h): pair i of a head vector at position p,
// (x0, x1) -> (x0 c - x1 s, x0 s + x1 c) with c, s the table's cos and sin at p.
// The inverse rotation (the backward: R orthogonal, so dx = R^T dy = R(-angle) dy) is
// (g0, g1) -> (g0 c + g1 s, -g0 s + g1 c).
#include "kernels/cpu/variant.h"
#include "kernels/cpu/rotate_pairs.h"
#include "kernels/parallel.h"

#include <cstring>

namespace mg {
// x, out [rows, T, d]; cos, sin [T, d/2] from the position of t = 0 on. Both inputs of a
// pair are read before either output is written, so out may alias x. Small inputs (the
// decoder's few head vectors of one position) stay out of an OpenMP region: entering one
// costs more than their work, even on one thread.

template <>
void Kernels::rope_rotate(float* out, const float* x, const float* cos, const float* sin, int64_t rows, int64_t T,
                          int64_t d, bool inverse, bool accumulate) {
  const int64_t half = d / 2;
  auto rotate = [&](int64_t rt, int64_t t) {  // head vector rt [d] of [rows*T, d], at position index t
    rotate_pairs(out + rt * d, x + rt * d, cos + t * half, sin + t * half, half, inverse, accumulate);
  };
  if (rows * T * d <= kParallelWork) {
    for (int64_t r = 0; r < rows; ++r)  // no division for the position index
      for (int64_t t = 0; t < T; ++t) rotate(r * T + t, t);
    return;
  }
#pragma omp parallel for
  for (int64_t rt = 0; rt < rows * T; ++rt) rotate(rt, rt % T);
}

// One (b, t) per iteration: its 3H head vectors, each d floats, move between the row
// [3D] and their places in the heads; q and k (part 0, 1) turn on the way.
template <>
void Kernels::relayout_qkv_cos_sin(float* out, const float* in, const float* cos, const float* sin, int64_t B,
                                   int64_t T, int64_t H, int64_t d, bool to_heads) {
  const int64_t D = H * d, half = d / 2;
#pragma omp parallel for collapse(2) if (3 * B * T * D > kParallelWork)
  for (int64_t b = 0; b < B; ++b) {
    for (int64_t t = 0; t < T; ++t) {
      for (int64_t part = 0; part < 3; ++part) {
        for (int64_t h = 0; h < H; ++h) {
          const int64_t head_at = (((part * B + b) * H + h) * T + t) * d;  // in [3,B,H,T,d]
          const int64_t row_at = (b * T + t) * 3 * D + part * D + h * d;    // in [B,T,3D]
          float* dst = out + (to_heads ? head_at : row_at);
          const float* src = in + (to_heads ? row_at : head_at);
          if (cos != nullptr && part < 2)
            rotate_pairs(dst, src, cos + t * half, sin + t * half, half, !to_heads, false);
          else
            std::memcpy(dst, src, sizeof(float) * d);
        }
      }
    }
  }
}

}  // namespace mg
