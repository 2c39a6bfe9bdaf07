// LayerNorm kernels over rows of width D (see layernorm.h for the formula).
// Rows are independent in the forward and for dx, so they run in parallel. dweight and
// dbias are sums over rows; to give the same bits for every thread count, rows are cut
// into fixed blocks of kRowBlock, each block sums into its own partial, and the partials
// are added in block order. Sums within a row use `omp simd` reductions: vector lanes
// reorder the additions, but the same way for any thread count.
#include "kernels/layernorm.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace mg {
namespace {

constexpr int64_t kParallelWork = 1 << 14;  // elements below which threads cost more than they save
constexpr int64_t kRowBlock = 32;

}  // namespace

void layernorm_forward(float* out, float* mean, float* rstd, const float* x, const float* weight,
                       const float* bias, int64_t rows, int64_t D, float eps) {
#pragma omp parallel for if (rows * D > kParallelWork)
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * D;  // [D]
    float* yr = out + r * D;      // [D]
    // Two passes (mean, then the mean of squared deviations) keep the variance accurate
    // when |mean| >> std, where E[x^2] - E[x]^2 would cancel.
    float sum = 0.0f;
#pragma omp simd reduction(+ : sum)
    for (int64_t j = 0; j < D; ++j) sum += xr[j];
    const float m = sum / static_cast<float>(D);
    float sq = 0.0f;
#pragma omp simd reduction(+ : sq)
    for (int64_t j = 0; j < D; ++j) sq += (xr[j] - m) * (xr[j] - m);
    const float s = 1.0f / std::sqrt(sq / static_cast<float>(D) + eps);
    for (int64_t j = 0; j < D; ++j) yr[j] = (xr[j] - m) * s * weight[j] + bias[j];
    mean[r] = m;
    rstd[r] = s;
  }
}

// With xhat = (x - mean) * rstd and g = dout * weight, per row:
//   dx = rstd * (g - mean(g) - xhat * mean(g * xhat))
// (the two means are the gradient through mean and through var), and over rows
//   dweight = sum dout * xhat,   dbias = sum dout.
void layernorm_backward(float* dx, float* dweight, float* dbias, const float* dout, const float* x,
                        const float* weight, const float* mean, const float* rstd, int64_t rows, int64_t D) {
  const int64_t blocks = (rows + kRowBlock - 1) / kRowBlock;
  const bool want_params = dweight != nullptr || dbias != nullptr;
  // [blocks, D] partial sums of dout * xhat and of dout.
  std::vector<float> dweight_part(want_params ? blocks * D : 0, 0.0f);
  std::vector<float> dbias_part(want_params ? blocks * D : 0, 0.0f);

#pragma omp parallel for if (rows * D > kParallelWork)
  for (int64_t blk = 0; blk < blocks; ++blk) {
    const int64_t end = std::min(rows, (blk + 1) * kRowBlock);
    for (int64_t r = blk * kRowBlock; r < end; ++r) {
      const float* xr = x + r * D;
      const float* gr = dout + r * D;
      const float m = mean[r], s = rstd[r];
      if (want_params) {
        float* pw = dweight_part.data() + blk * D;
        float* pb = dbias_part.data() + blk * D;
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

  for (int64_t blk = 0; blk < blocks && want_params; ++blk) {
    for (int64_t j = 0; j < D; ++j) {
      if (dweight) dweight[j] += dweight_part[blk * D + j];
      if (dbias) dbias[j] += dbias_part[blk * D + j];
    }
  }
}

}  // namespace mg
