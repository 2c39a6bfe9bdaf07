// The model's arithmetic in double, one function per step as docs/model.md states it:
// LayerNorm (section 2.2), a weight's rows applied to a vector, the softmax of one query's
// scores (2.5) and the residual add. The techniques that redo the model step by step to
// show or split it (interp's trace, logit_lens, qk_ov, lesson) and ln_f's frozen scale
// (gpt.cpp, for direct logit attribution) all call these, so the reference arithmetic is
// written once. The float kernels (kernels/, autograd/) are what trains and runs; these are
// what they are checked against and explained with.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace mg {

// The mean of a row x [D] and its LayerNorm divisor sqrt(var + eps), var the biased variance.
struct RowMoments {
  double mean = 0.0, sigma = 1.0;
};
RowMoments layer_norm_moments(const float* x, int64_t D, double eps);

// LayerNorm of x [D]: (x - mean) / sigma * gamma + beta, each [D].
std::vector<double> layer_norm_row(const float* x, int64_t D, const float* gamma, const float* beta, double eps);

// Rows first..first+count-1 of W [*, D] applied to x [D] (D = x.size()): one head's q, k or v
// coordinates when the rows are the head's.
std::vector<double> rows_times(const float* W, int64_t first, int64_t count, const std::vector<double>& x);

// softmax over X in place, max-subtracted: one query's weights over its keys.
void softmax_in_place(std::span<double> x);

// x + y, the residual add.
std::vector<double> residual_add(const std::vector<double>& x, const std::vector<double>& y);

}  // namespace mg
