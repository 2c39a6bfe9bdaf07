// One row's max-subtracted softmax, shared by the causal softmax and cross-entropy so that
// both compute it the same way (stable for logits of +-1e4). Always inlined, and with no
// std:: algorithm inside: kernels/cpu/ compiles it for three instruction sets, and an
// out-of-line copy could be shared with baseline callers (see kernels/cpu_kernels.h).
#pragma once

#include <cmath>
#include <cstdint>

namespace mg {

struct SoftmaxRowStats {
  float max;  // the row's largest input
  float sum;  // sum of exp(x - max) before normalising: log-softmax(x)_v = x_v - max - log(sum)
};

// p[0..n) = softmax(x[0..n)); n >= 1. p may alias x.
[[gnu::always_inline]] inline SoftmaxRowStats softmax_row(float* p, const float* x, int64_t n) {
  // The maximum is the same in any order, so its loop may use vector lanes; the sum's
  // order stays fixed.
  float max = x[0];
#pragma omp simd reduction(max : max)
  for (int64_t v = 1; v < n; ++v) max = x[v] > max ? x[v] : max;
  float sum = 0.0f;
  for (int64_t v = 0; v < n; ++v) {
    p[v] = std::exp(x[v] - max);
    sum += p[v];
  }
  const float inv = 1.0f / sum;
  for (int64_t v = 0; v < n; ++v) p[v] *= inv;
  return {max, sum};
}

}  // namespace mg
