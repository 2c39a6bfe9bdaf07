// AdamW's update of one parameter tensor (kernels/optimizer.h), element-wise.
#include "kernels/cpu/variant.h"
#include "kernels/optimizer.h"
#include "kernels/parallel.h"

#include <cmath>

namespace mg {

namespace {

// One element's update; restrict: the four arrays never overlap, which the vectoriser
// must be told (else it versions the loop on an overlap check, and ran its scalar copy).
[[gnu::always_inline]] inline void adamw_range(float* __restrict param, float* __restrict exp_avg,
                                               float* __restrict exp_avg_sq, const float* __restrict grad,
                                               int64_t begin, int64_t end, float b1, float b2, float decay,
                                               float step_size, float inv_sqrt_bc2, float eps) {
#pragma omp simd
  for (int64_t i = begin; i < end; ++i) {
    const float g = grad[i];
    const float m = b1 * exp_avg[i] + (1.0f - b1) * g;
    const float v = b2 * exp_avg_sq[i] + (1.0f - b2) * g * g;
    exp_avg[i] = m;
    exp_avg_sq[i] = v;
    // torch: denom = sqrt(v) / sqrt(bc2) + eps; p = p * (1 - lr wd) - (lr / bc1) * m / denom
    param[i] = param[i] * decay - step_size * m / (std::sqrt(v) * inv_sqrt_bc2 + eps);
  }
}

}  // namespace

template <>
void Kernels::adamw_update(float* param, float* exp_avg, float* exp_avg_sq, const float* grad, int64_t n,
                           const AdamWStep& s) {
  const float b1 = static_cast<float>(s.beta1), b2 = static_cast<float>(s.beta2);
  const float decay = static_cast<float>(1.0 - s.lr * s.weight_decay);
  const float step_size = static_cast<float>(s.lr / s.bias_correction1);
  const float inv_sqrt_bc2 = static_cast<float>(1.0 / std::sqrt(s.bias_correction2));
  const float eps = static_cast<float>(s.eps);
  // Below kParallelWork (every tensor of the default model: AdamW::step shares the tensors
  // out over the threads instead) no region at all; above it, chunks of whole vectors.
  if (n <= kParallelWork) return adamw_range(param, exp_avg, exp_avg_sq, grad, 0, n, b1, b2, decay, step_size,
                                             inv_sqrt_bc2, eps);
  constexpr int64_t kChunk = 4096;
#pragma omp parallel for
  for (int64_t c = 0; c < (n + kChunk - 1) / kChunk; ++c)
    adamw_range(param, exp_avg, exp_avg_sq, grad, c * kChunk, c * kChunk + kChunk < n ? c * kChunk + kChunk : n, b1,
                b2, decay, step_size, inv_sqrt_bc2, eps);
}

}  // namespace mg
