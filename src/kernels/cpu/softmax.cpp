// Causal softmax over the last axis of scores [batch, Tq, Tk] (see softmax.h).
// Query row i sees the first Tk - Tq + i + 1 keys; the max over those is subtracted
// before exp, so scores of +-1e4 neither overflow nor vanish. Masked weights are
// written as exact zeros, never exp(-inf).
#include "kernels/cpu/variant.h"
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

// One row at a time (softmax_row.h's softmax_backward_row), rows in parallel.
template <>
void Kernels::causal_softmax_backward(float* dscores, const float* dweights, const float* weights, int64_t batch,
                                      int64_t Tq, int64_t Tk, float scale, bool accumulate) {
  const int64_t rows = batch * Tq;
#pragma omp parallel for if (rows * Tk > kParallelWork)
  for (int64_t r = 0; r < rows; ++r)
    softmax_backward_row(dscores + r * Tk, dweights + r * Tk, weights + r * Tk, Tk - Tq + r % Tq + 1, Tk, scale,
                         accumulate);
}

}  // namespace mg
