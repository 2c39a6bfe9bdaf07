#include "kernels/elementwise.h"

#include <algorithm>
#include <cstring>
#include <vector>

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

// Each thread sums whole rows of its blocks (contiguous memory, the rows a GEMM's thread
// likely just wrote into its own cache), not strips of columns down every row: walking
// 16 columns at a time read each row's cache line from the other core's or from memory.
// The blocks' partial sums live in scratch kept between calls, so a training step's bias
// gradients ask the allocator for nothing once the first step has sized it.
void sum_rows(float* dst, const float* src, int64_t rows, int64_t cols, bool accumulate) {
  const int64_t blocks = (rows + kSumRowsBlock - 1) / kSumRowsBlock;
  thread_local std::vector<float> partial;  // [blocks, cols]
  partial.assign(static_cast<size_t>(blocks * cols), 0.0f);
  float* const sums = partial.data();  // the caller's buffer: each OpenMP thread has its own thread_local
#pragma omp parallel for if (rows * cols > kParallelWork)
  for (int64_t blk = 0; blk < blocks; ++blk) {
    float* sum = sums + blk * cols;
    const int64_t end = std::min(rows, (blk + 1) * kSumRowsBlock);
    for (int64_t r = blk * kSumRowsBlock; r < end; ++r) {
      const float* row = src + r * cols;
#pragma omp simd
      for (int64_t j = 0; j < cols; ++j) sum[j] += row[j];
    }
  }
  for (int64_t j = 0; j < cols; ++j) {
    float total = 0.0f;
    for (int64_t blk = 0; blk < blocks; ++blk) total += sums[blk * cols + j];
    dst[j] = (accumulate ? dst[j] : 0.0f) + total;
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
