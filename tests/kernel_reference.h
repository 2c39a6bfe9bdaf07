// Plain loops the packed matrix-vector kernels (kernels/packed_linear.h) are held against.
#pragma once

#include <cstdint>

#include "kernels/packed_linear.h"

namespace mg {

// y[out] (+)= x[in] W^T + b, W [out,in].
inline void linear_reference(float* y, const float* x, const float* weight, const float* bias, int64_t out, int64_t in,
                             bool accumulate) {
  for (int64_t o = 0; o < out; ++o) {
    float sum = bias ? bias[o] : 0.0f;
    for (int64_t i = 0; i < in; ++i) sum += x[i] * weight[o * in + i];
    y[o] = accumulate ? y[o] + sum : sum;
  }
}

// One row through the kernel: y[width] = x[in] A.
inline void vector_matrix(float* y, const float* x, const float* a, int64_t lda, int64_t in, int64_t width) {
  matrix_product(y, 0, x, 0, 1, a, lda, in, width);
}

}  // namespace mg
