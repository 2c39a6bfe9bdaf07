// RoPE's rotation of one head vector, shared by the kernels/cpu/ files that rotate on the
// way through (rope_rotate.cpp, fused_attention.cpp). Internal linkage: each CPU variant keeps its own.
#pragma once

#include <cstdint>

namespace mg {
namespace {

// y = R(angle) x pair by pair, (x0, x1) -> (x0 c - x1 s, x0 s + x1 c), or R(-angle) x when
// inverse (sin negated); added into y when accumulate. c, s [half] at the vector's position.
// Both inputs of a pair are read before either output is written, so y may alias x.
inline void rotate_pairs(float* y, const float* x, const float* c, const float* s, int64_t half, bool inverse,
                         bool accumulate) {
  const float sign = inverse ? -1.0f : 1.0f;
  for (int64_t i = 0; i < half; ++i) {
    const float x0 = x[2 * i], x1 = x[2 * i + 1], si = sign * s[i];
    const float y0 = x0 * c[i] - x1 * si, y1 = x0 * si + x1 * c[i];
    y[2 * i] = accumulate ? y[2 * i] + y0 : y0;
    y[2 * i + 1] = accumulate ? y[2 * i + 1] + y1 : y1;
  }
}

}  // namespace
}  // namespace mg
