// LayerNorm kernels over rows of width D (see layernorm.h for the formula).
// Rows are independent in the forward and for dx, so they run in parallel. dweight and
// dbias are sums over rows; to give the same bits for every thread count, rows are cut
// into fixed blocks, each block sums into its own partial, and the caller adds the
// partials in block order. Sums within a row use `omp simd` reductions: vector lanes
// reorder the additions, the same way for any thread count (but not for every CPU
// variant: 4, 8 or 16 lanes).
#include "kernels/cpu/variant.h"
#include "kernels/parallel.h"

#include <cmath>

namespace mg {
namespace {


// out[D] = (x - mean) / sqrt(var + eps) * weight + bias, with the biased variance. Two
// passes (the mean, then the mean squared deviation) keep the variance accurate when
// |mean| >> std, where E[x^2] - E[x]^2 would cancel.
inline void normalize_row(float* out, float* mean_out, float* rstd_out, const float* x, const float* weight,
                          const float* bias, int64_t D, float eps) {
  float sum = 0.0f;
#pragma omp simd reduction(+ : sum)
  for (int64_t j = 0; j < D; ++j) sum += x[j];
  const float mean = sum / static_cast<float>(D);
  float squares = 0.0f;
#pragma omp simd reduction(+ : squares)
  for (int64_t j = 0; j < D; ++j) squares += (x[j] - mean) * (x[j] - mean);
  const float rstd = 1.0f / std::sqrt(squares / static_cast<float>(D) + eps);
  for (int64_t j = 0; j < D; ++j) out[j] = (x[j] - mean) * rstd * weight[j] + bias[j];
  *mean_out = mean;
  *rstd_out = rstd;
}

}  // namespace

template <>
void Kernels::layernorm_forward(float* out, float* mean, float* rstd, const float* x, const float* weight,
                                const float* bias, int64_t rows, int64_t D, float eps) {
#pragma omp parallel for if (rows * D > kParallelWork)
  for (int64_t r = 0; r < rows; ++r) normalize_row(out + r * D, mean + r, rstd + r, x + r * D, weight, bias, D, eps);
}

template <>
void Kernels::layernorm_row(float* out, const float* x, const float* weight, const float* bias, int64_t D,
                            float eps) {
  float mean, rstd;
  normalize_row(out, &mean, &rstd, x, weight, bias, D, eps);
}

// With xhat = (x - mean) * rstd and g = dout * weight, per row:
//   dx = rstd * (g - mean(g) - xhat * mean(g * xhat))
// (the two means are the gradient through mean and through var), and over rows
//   dweight = sum dout * xhat,   dbias = sum dout.
template <>
void Kernels::layernorm_backward_blocks(float* dx, float* dweight_part, float* dbias_part, const float* dout,
                                        const float* x, const float* weight, const float* mean, const float* rstd,
                                        int64_t rows, int64_t D, int64_t row_block) {
  const int64_t blocks = (rows + row_block - 1) / row_block;
#pragma omp parallel for if (rows * D > kParallelWork)
  for (int64_t blk = 0; blk < blocks; ++blk) {
    const int64_t end = (blk + 1) * row_block < rows ? (blk + 1) * row_block : rows;
    for (int64_t r = blk * row_block; r < end; ++r) {
      const float* xr = x + r * D;
      const float* gr = dout + r * D;
      const float m = mean[r], s = rstd[r];
      if (dweight_part != nullptr) {
        float* pw = dweight_part + blk * D;  // [D]
        float* pb = dbias_part + blk * D;    // [D]
        for (int64_t j = 0; j < D; ++j) {
          pw[j] += gr[j] * (xr[j] - m) * s;
          pb[j] += gr[j];
        }
      }
      if (dx == nullptr) continue;
      float g_mean = 0.0f, gx_mean = 0.0f;
#pragma omp simd reduction(+ : g_mean, gx_mean)
      for (int64_t j = 0; j < D; ++j) {
        const float g = gr[j] * weight[j];
        g_mean += g;
        gx_mean += g * (xr[j] - m) * s;
      }
      g_mean /= static_cast<float>(D);
      gx_mean /= static_cast<float>(D);
      float* dxr = dx + r * D;
      for (int64_t j = 0; j < D; ++j) {
        const float xhat = (xr[j] - m) * s;
        dxr[j] += s * (gr[j] * weight[j] - g_mean - xhat * gx_mean);
      }
    }
  }
}

}  // namespace mg
