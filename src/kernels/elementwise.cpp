#include "kernels/elementwise.h"

#include <algorithm>
#include <cstring>

#include "kernels/parallel.h"

namespace mg {

void add_scaled(float* dst, const float* src, float factor, int64_t n, bool accumulate) {
  if (accumulate) {
#pragma omp parallel for simd if (n > kParallelWork)
    for (int64_t i = 0; i < n; ++i) dst[i] += factor * src[i];
  } else {
#pragma omp parallel for simd if (n > kParallelWork)
    for (int64_t i = 0; i < n; ++i) dst[i] = factor * src[i];
  }
}

void multiply(float* dst, const float* x, const float* mask, int64_t n, bool accumulate) {
#pragma omp parallel for simd if (n > kParallelWork)
  for (int64_t i = 0; i < n; ++i) dst[i] = (accumulate ? dst[i] : 0.0f) + x[i] * mask[i];
}

void add_broadcast_rows(float* out, const float* a, const float* b, int64_t rows, int64_t cols) {
#pragma omp parallel for if (rows * cols > kParallelWork)
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) out[r * cols + c] = (a ? a[r * cols + c] : 0.0f) + (b ? b[c] : 0.0f);
}

// The columns are walked in blocks of 16 (one cache line of each row), the sums kept in
// registers across rows.
void sum_rows(float* dst, const float* src, int64_t rows, int64_t cols, bool accumulate) {
  constexpr int64_t kBlock = 16;
  const int64_t blocks = (cols + kBlock - 1) / kBlock;
#pragma omp parallel for if (rows * cols > kParallelWork)
  for (int64_t blk = 0; blk < blocks; ++blk) {
    const int64_t begin = blk * kBlock, width = std::min(kBlock, cols - begin);
    float sum[kBlock] = {};
    for (int64_t r = 0; r < rows; ++r) {
      const float* row = src + r * cols + begin;
      for (int64_t j = 0; j < width; ++j) sum[j] += row[j];
    }
    for (int64_t j = 0; j < width; ++j) dst[begin + j] = (accumulate ? dst[begin + j] : 0.0f) + sum[j];
  }
}

void swap_middle_axes(float* out, const float* in, int64_t outer, int64_t n1, int64_t n2, int64_t d,
                      bool accumulate) {
#pragma omp parallel for collapse(2) if (outer * n1 * n2 * d > kParallelWork)
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < n1; ++i) {
      for (int64_t j = 0; j < n2; ++j) {
        const float* src = in + ((o * n1 + i) * n2 + j) * d;
        float* dst = out + ((o * n2 + j) * n1 + i) * d;
        if (accumulate) {
          for (int64_t k = 0; k < d; ++k) dst[k] += src[k];
        } else {
          std::memcpy(dst, src, sizeof(float) * d);
        }
      }
    }
  }
}

}  // namespace mg
