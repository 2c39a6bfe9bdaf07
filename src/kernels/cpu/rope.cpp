// Rotary position embedding's rotation (rope.h): pair i of a head vector at position p,
// (x0, x1) -> (x0 c - x1 s, x0 s + x1 c) with c, s the table's cos and sin at p.
// The inverse rotation (the backward: R orthogonal, so dx = R^T dy = R(-angle) dy) is
// (g0, g1) -> (g0 c + g1 s, -g0 s + g1 c).
#include "kernels/cpu/variant.h"
#include "kernels/parallel.h"

namespace mg {
// x, out [rows, T, d]; cos, sin [T, d/2] from the position of t = 0 on. Both inputs of a
// pair are read before either output is written, so out may alias x. Small inputs (the
// decoder's few head vectors of one position) stay out of an OpenMP region: entering one
// costs more than their work, even on one thread.
template <>
void Kernels::rope_rotate(float* out, const float* x, const float* cos, const float* sin, int64_t rows, int64_t T,
                          int64_t d, bool inverse, bool accumulate) {
  const int64_t half = d / 2;
  const float sign = inverse ? -1.0f : 1.0f;  // R(-angle): sin negated
  auto rotate = [&](int64_t rt, int64_t t) {  // head vector rt [d] of [rows*T, d], at position index t
    const float* c = cos + t * half;  // [d/2]
    const float* s = sin + t * half;  // [d/2]
    const float* xv = x + rt * d;
    float* yv = out + rt * d;
    for (int64_t i = 0; i < half; ++i) {
      const float x0 = xv[2 * i], x1 = xv[2 * i + 1], si = sign * s[i];
      const float y0 = x0 * c[i] - x1 * si, y1 = x0 * si + x1 * c[i];
      yv[2 * i] = accumulate ? yv[2 * i] + y0 : y0;
      yv[2 * i + 1] = accumulate ? yv[2 * i + 1] + y1 : y1;
    }
  };
  if (rows * T * d <= kParallelWork) {
    for (int64_t r = 0; r < rows; ++r)  // no division for the position index
      for (int64_t t = 0; t < T; ++t) rotate(r * T + t, t);
    return;
  }
#pragma omp parallel for
  for (int64_t rt = 0; rt < rows * T; ++rt) rotate(rt, rt % T);
}

}  // namespace mg
