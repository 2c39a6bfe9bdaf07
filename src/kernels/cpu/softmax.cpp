// Causal softmax over the last axis of scores [batch, Tq, Tk] (see softmax.h).
// Query row i sees the first Tk - Tq + i + 1 keys; the max over those is subtracted
// before exp, so scores of +-1e4 neither overflow nor vanish. Masked weights are
// written as exact zeros, never exp(-inf).
#include "kernels/cpu/variant.h"
#include "kernels/cpu/simd.h"
#include "kernels/softmax_row.h"
#include "kernels/parallel.h"

namespace mg {
// Small inputs (the decoder's one head of a window) stay out of an OpenMP region:
// entering one costs more than their work, even on one thread.
template <>
void Kernels::causal_softmax_forward(float* weights, const float* scores, int64_t batch, int64_t Tq, int64_t Tk) {
  const int64_t rows = batch * Tq;
  auto row = [&](int64_t r) {
    const int64_t visible = Tk - Tq + r % Tq + 1;  // keys 0 .. visible-1
    const float* s = scores + r * Tk;               // [Tk]
    float* w = weights + r * Tk;                    // [Tk]
    softmax_row(w, s, visible, Tk);
  };
  if (rows * Tk <= kParallelWork) {
    for (int64_t r = 0; r < rows; ++r) row(r);
    return;
  }
#pragma omp parallel for
  for (int64_t r = 0; r < rows; ++r) row(r);
}

// The Jacobian of softmax is diag(w) - w w^T, so ds = w * (dw - <w, dw>); masked keys
// had w = 0 and get nothing. One loop for both entry points: added into dscores
// (accumulate), or written as scale * ds with exact zeros where masked.
template <>
void Kernels::softmax_backward_rows(float* dscores, const float* dweights, const float* weights, int64_t batch,
                                    int64_t Tq, int64_t Tk, float scale, bool accumulate) {
  const int64_t rows = batch * Tq;
#pragma omp parallel for if (rows * Tk > kParallelWork)
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t visible = Tk - Tq + r % Tq + 1;
    const float* w = weights + r * Tk;
    const float* dw = dweights + r * Tk;
    float* ds = dscores + r * Tk;
    // <w, dw> over the visible keys in vector lanes; w is 0 past them, dw is masked there.
    FloatVec dot_lanes = splat(0.0f);
    for (int64_t k = 0; k < visible; k += kLanes) {
      const FloatVec product = load_row(w, k, Tk, 0.0f) * load_row(dw, k, Tk, 0.0f);
      dot_lanes += lane_index(k) < static_cast<int32_t>(visible) ? product : splat(0.0f);
    }
    const float dot = sum_lanes(dot_lanes);
    if (accumulate) {
      for (int64_t k = 0; k < visible; ++k) ds[k] += w[k] * (dw[k] - dot);
    } else {
      for (int64_t k = 0; k < visible; ++k) ds[k] = scale * (w[k] * (dw[k] - dot));
      for (int64_t k = visible; k < Tk; ++k) ds[k] = 0.0f;
    }
  }
}

}  // namespace mg
