// The fused AdamW update of one parameter tensor (see optim/adamw.h for the math).
#pragma once

#include <cstdint>

namespace mg {

struct AdamWStep {
  double lr, beta1, beta2, eps, weight_decay, bias_correction1, bias_correction2;
};

// param, exp_avg, exp_avg_sq, grad: n values each; updated in place except grad.
void adamw_update(float* param, float* exp_avg, float* exp_avg_sq, const float* grad, int64_t n,
                  const AdamWStep& s);

}  // namespace mg
