// AdamW's update of one parameter tensor (adamw.h), element-wise.
#include "kernels/cpu/variant.h"
#include "kernels/parallel.h"

#include <cmath>

namespace mg {

template <>
void Kernels::adamw_update(float* param, float* exp_avg, float* exp_avg_sq, const float* grad, int64_t n,
                           const AdamWStep& s) {
  const float b1 = static_cast<float>(s.beta1), b2 = static_cast<float>(s.beta2);
  const float decay = static_cast<float>(1.0 - s.lr * s.weight_decay);
  const float step_size = static_cast<float>(s.lr / s.bias_correction1);
  const float inv_sqrt_bc2 = static_cast<float>(1.0 / std::sqrt(s.bias_correction2));
  const float eps = static_cast<float>(s.eps);
#pragma omp parallel for simd if (n > kParallelWork)
  for (int64_t i = 0; i < n; ++i) {
    const float g = grad[i];
    const float m = b1 * exp_avg[i] + (1.0f - b1) * g;
    const float v = b2 * exp_avg_sq[i] + (1.0f - b2) * g * g;
    exp_avg[i] = m;
    exp_avg_sq[i] = v;
    // torch: denom = sqrt(v) / sqrt(bc2) + eps; p = p * (1 - lr wd) - (lr / bc1) * m / denom
    param[i] = param[i] * decay - step_size * m / (std::sqrt(v) * inv_sqrt_bc2 + eps);
  }
}

}  // namespace mg
