// The optimizer's kernels: the fused AdamW update of one parameter tensor (see optim/adamw.h
// for the math), the same update over every tensor of a model, and the gradient norm's sums.
#pragma once

#include <cstdint>
#include <span>

#include "kernels/cpu_kernels.h"

namespace mg {

struct AdamWStep {
  double lr, beta1, beta2, eps, weight_decay, bias_correction1, bias_correction2;
};

// adamw_update(param, exp_avg, exp_avg_sq, grad, n, step), compiled per CPU variant
// (kernels/cpu_kernels.h's list): param, exp_avg, exp_avg_sq, grad n values each, updated
// in place except grad.

// One tensor of a model's AdamW step; decay: weight decay applies (the matrices).
struct AdamWTensor {
  float* param;
  float* exp_avg;
  float* exp_avg_sq;
  const float* grad;
  int64_t n;
  bool decay;
};

// adamw_update of every tensor, with step.weight_decay on those that decay and none on the
// others; the tensors shared out over the threads (most are too small to split). Each
// element's update is independent, so any split gives the same bits.
void adamw_update_all(std::span<const AdamWTensor> tensors, const AdamWStep& step);

// sums[i] = sum of squares of tensors[i], in double, each tensor's squares in kLanes
// interleaved sums (a vector loop) added in lane order, the tensors shared out over the
// threads: the same bits on any thread count.
void sums_of_squares(double* sums, std::span<const std::span<const float>> tensors);

// Every value of every tensor times factor.
void scale_all(std::span<const std::span<float>> tensors, float factor);

}  // namespace mg
