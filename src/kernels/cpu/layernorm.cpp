// LayerNorm kernels over rows of width D (see layernorm.h for the formula).
// Rows are independent in the forward and for dx, so they run in parallel. dweight and
// dbias are sums over rows; to give the same bits for every thread count, rows are cut
// into fixed blocks, each block sums into its own partial, and the caller adds the
// partials in block order. Sums within a row run in the variant's vector lanes, added
// across them as a tree: the same order for any thread count (but not for every CPU
// variant: 4, 8 or 16 lanes).
#include "kernels/cpu/variant.h"
#include "kernels/cpu/simd.h"
#include "kernels/parallel.h"

#include <cmath>

namespace mg {
namespace {

// out[D] = (x - mean) / sqrt(var + eps) * weight + bias, with the biased variance. Two
// passes (the mean, then the mean squared deviation) keep the variance accurate when
// |mean| >> std, where E[x^2] - E[x]^2 would cancel. The sums run in vector lanes, added
// across the lanes as a tree (simd.h's sum_lanes): an `omp simd` reduction ended in 15
// dependent scalar adds per sum, most of a row's time.
inline void normalize_row(float* out, float* mean_out, float* rstd_out, const float* x, const float* weight,
                          const float* bias, int64_t D, float eps) {
  FloatVec sum = splat(0.0f);
  for (int64_t j = 0; j < D; j += kLanes) sum += load_row(x, j, D, 0.0f);
  const float mean = sum_lanes(sum) / static_cast<float>(D);
  FloatVec squares = splat(0.0f);
  for (int64_t j = 0; j < D; j += kLanes) {
    const FloatVec centred = load_row(x, j, D, mean) - mean;  // 0 past D
    squares += centred * centred;
  }
  const float rstd = 1.0f / std::sqrt(sum_lanes(squares) / static_cast<float>(D) + eps);
  for (int64_t j = 0; j < D; j += kLanes)
    store_row(out, j, D,
              (load_row(x, j, D, 0.0f) - mean) * rstd * load_row(weight, j, D, 0.0f) + load_row(bias, j, D, 0.0f));
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
        for (int64_t j = 0; j < D; j += kLanes) {
          const FloatVec g = load_row(gr, j, D, 0.0f), xhat = (load_row(xr, j, D, 0.0f) - m) * s;
          store_row(pw, j, D, load_row(pw, j, D, 0.0f) + g * xhat);
          store_row(pb, j, D, load_row(pb, j, D, 0.0f) + g);
        }
      }
      if (dx == nullptr) continue;
      // The two means in vector lanes (0 past D, where dout is read as 0), then a tree.
      FloatVec g_sum = splat(0.0f), gx_sum = splat(0.0f);
      for (int64_t j = 0; j < D; j += kLanes) {
        const FloatVec g = load_row(gr, j, D, 0.0f) * load_row(weight, j, D, 0.0f);
        g_sum += g;
        gx_sum += g * ((load_row(xr, j, D, 0.0f) - m) * s);
      }
      const float g_mean = sum_lanes(g_sum) / static_cast<float>(D);
      const float gx_mean = sum_lanes(gx_sum) / static_cast<float>(D);
      float* dxr = dx + r * D;
      for (int64_t j = 0; j < D; j += kLanes) {
        const FloatVec xhat = (load_row(xr, j, D, 0.0f) - m) * s;
        const FloatVec g = load_row(gr, j, D, 0.0f) * load_row(weight, j, D, 0.0f);
        store_row(dxr, j, D, load_row(dxr, j, D, 0.0f) + s * (g - g_mean - xhat * gx_mean));
      }
    }
  }
}

}  // namespace mg
