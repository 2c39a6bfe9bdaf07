// One row's max-subtracted softmax, shared by the causal softmax and cross-entropy so that
// both compute it the same way (stable for logits of +-1e4). For kernels/cpu/ files only:
// it is written in the variant's float vectors (kernels/cpu/simd.h) and always inlined.
#pragma once

#include <cmath>
#include <cstdint>

#include "kernels/cpu/simd.h"
#include "kernels/exp_approx.h"

namespace mg {

struct SoftmaxRowStats {
  float max;  // the largest visible input
  float sum;  // sum of exp(x - max) before normalising: log-softmax(x)_v = x_v - max - log(sum)
};

// p[0..n) = softmax(x[0..visible)) followed by exact zeros; 1 <= visible <= n. p may alias x.
// Three passes, each one vector per kLanes values: the maximum; the exps, stored and summed
// in lanes; the scale by 1 / sum. Lanes past `visible` hold -inf, whose exp is 0, so a block
// that straddles the end of the visible keys needs no scalar tail, and blocks past it are
// only written with zeros. exp(x - max) below -87 is taken as 0 (it is under 2e-38, against
// a sum of at least 1); a NaN stays NaN.
[[gnu::always_inline]] inline SoftmaxRowStats softmax_row(float* p, const float* x, int64_t visible, int64_t n) {
  const int64_t blocks = (visible + kLanes - 1) / kLanes;  // blocks holding a visible key
  auto block_at = [&](int64_t v) {                           // x[v, v+kLanes), -inf from `visible` on
    return lane_index(v) < static_cast<int32_t>(visible) ? load_row(x, v, n, -INFINITY) : splat(-INFINITY);
  };
  FloatVec max_vec = splat(-INFINITY);
  for (int64_t b = 0; b < blocks; ++b) max_vec = max(max_vec, block_at(b * kLanes));
  const float row_max = max_lanes(max_vec);

  FloatVec sum_vec = splat(0.0f);
  for (int64_t b = 0; b < blocks; ++b) {
    const FloatVec shifted = block_at(b * kLanes) - row_max;
    const FloatVec e = shifted < -87.0f ? splat(0.0f) : exp_approx<FloatVec, IntVec>(shifted);
    sum_vec += e;
    store_row(p, b * kLanes, n, e);
  }
  const float sum = sum_lanes(sum_vec);

  const FloatVec inv = splat(1.0f / sum);
  int64_t v = 0;
  for (; v + kLanes <= blocks * kLanes && v + kLanes <= n; v += kLanes) store(p + v, load(p + v) * inv);
  for (; v < visible; ++v) p[v] *= 1.0f / sum;  // a last partial block at the row's end
  // [visible, blocks * kLanes) already holds the exps' zeros; the keys after it get them here.
  for (v = blocks * kLanes; v + kLanes <= n; v += kLanes) store(p + v, splat(0.0f));
  for (; v < n; ++v) p[v] = 0.0f;
  return {row_max, sum};
}

// The backward of w = softmax over the visible keys of scale * s, one row [n]: the Jacobian
// is diag(w) - w w^T, so ds = scale * w * (dw - <w, dw>), added into ds (accumulate) or
// written with exact zeros past `visible`; masked keys had w = 0 and get nothing. ds may
// alias dw (each row reads its dw before writing).
[[gnu::always_inline]] inline void softmax_backward_row(float* ds, const float* dw, const float* w, int64_t visible,
                                                       int64_t n, float scale, bool accumulate) {
  // <w, dw> over the visible keys in vector lanes; w is 0 past them, dw is masked there.
  FloatVec dot_lanes = splat(0.0f);
  for (int64_t k = 0; k < visible; k += kLanes) {
    const FloatVec product = load_row(w, k, n, 0.0f) * load_row(dw, k, n, 0.0f);
    dot_lanes += lane_index(k) < static_cast<int32_t>(visible) ? product : splat(0.0f);
  }
  const float dot = sum_lanes(dot_lanes);
  if (accumulate) {
    for (int64_t k = 0; k < visible; ++k) ds[k] += scale * (w[k] * (dw[k] - dot));
  } else {
    for (int64_t k = 0; k < visible; ++k) ds[k] = scale * (w[k] * (dw[k] - dot));
    for (int64_t k = visible; k < n; ++k) ds[k] = 0.0f;
  }
}

}  // namespace mg
