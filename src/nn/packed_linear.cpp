// The packed matrix-vector kernel (see packed_linear.h). The build targets x86-64-v3, so
// AVX2 and FMA are always there; one instantiation per panel width in vectors (1..8) keeps
// the accumulators in registers for any width.
#include "nn/packed_linear.h"

#include <immintrin.h>

#include <algorithm>

#include "tensor/error.h"

namespace mg {
namespace {

constexpr int64_t kLanes = 8;    // floats per AVX2 register
constexpr int64_t kPanel = 64;   // outputs per panel: 8 accumulators, half the register file

int64_t round_up(int64_t n, int64_t to) { return (n + to - 1) / to * to; }

// Lanes 0..valid-1 on, for the last, partial vector of a row whose width is not a multiple of 8.
__m256i lane_mask(int64_t valid) {
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(valid)), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

// One row against one panel: y[0..valid) (+)= bias[0..8 NV) + sum_i x[i] panel[i, 0..8 NV),
// panel rows ld apart. Lanes past valid are computed from whatever the panel holds there
// and never stored.
template <int NV>
void panel_row(float* y, const float* x, const float* panel, int64_t ld, const float* bias, int64_t in,
               int64_t valid, bool accumulate) {
  // Every index into acc is a constant after unrolling, so the sums live in registers
  // (an index known only at run time would keep them in memory, stored every step).
  __m256 acc[NV];
#pragma GCC unroll 8
  for (int v = 0; v < NV; ++v) acc[v] = _mm256_loadu_ps(bias + kLanes * v);
  for (int64_t i = 0; i < in; ++i) {
    const __m256 xi = _mm256_broadcast_ss(x + i);
    const float* w = panel + i * ld;
#pragma GCC unroll 8
    for (int v = 0; v < NV; ++v) acc[v] = _mm256_fmadd_ps(xi, _mm256_loadu_ps(w + kLanes * v), acc[v]);
  }
  // The layer's output is added to y after it is complete, as (x + (x W^T + b)) reads.
#pragma GCC unroll 8
  for (int v = 0; v < NV; ++v) {
    const int64_t lanes = valid - kLanes * v;  // outputs of this vector to write, if in 1..8
    float* yv = y + kLanes * v;
    if (lanes >= kLanes) {
      _mm256_storeu_ps(yv, accumulate ? _mm256_add_ps(_mm256_loadu_ps(yv), acc[v]) : acc[v]);
    } else if (lanes > 0) {
      const __m256i mask = lane_mask(lanes);
      _mm256_maskstore_ps(yv, mask, accumulate ? _mm256_add_ps(_mm256_maskload_ps(yv, mask), acc[v]) : acc[v]);
    }
  }
}

using PanelKernel = void (*)(float*, const float*, const float*, int64_t, const float*, int64_t, int64_t, bool);

PanelKernel panel_kernel(int64_t vectors) {
  static constexpr PanelKernel kernels[] = {panel_row<1>, panel_row<2>, panel_row<3>, panel_row<4>,
                                            panel_row<5>, panel_row<6>, panel_row<7>, panel_row<8>};
  MG_CHECK(vectors >= 1 && vectors <= 8, "a panel holds 1 to 8 vectors");
  return kernels[vectors - 1];
}

}  // namespace

PackedLinear::PackedLinear(const float* weight, const float* bias, int64_t out, int64_t in)
    : out_(out), in_(in), bias_(static_cast<size_t>(round_up(out, kLanes)), 0.0f) {
  MG_CHECK(out >= 1 && in >= 1, "a linear layer needs at least one input and one output");
  if (bias) std::copy(bias, bias + out, bias_.begin());
  // Every panel but the last is kPanel wide, so panel p starts at p * kPanel * in.
  panels_.assign(static_cast<size_t>(round_up(out, kLanes) * in), 0.0f);
  for (int64_t start = 0; start < out; start += kPanel) {
    const int64_t width = std::min(kPanel, out - start), padded = round_up(width, kLanes);
    float* panel = panels_.data() + start * in;  // [in, padded]
    for (int64_t o = 0; o < width; ++o)
      for (int64_t i = 0; i < in; ++i) panel[i * padded + o] = weight[(start + o) * in + i];
  }
}

void PackedLinear::forward(float* y, int64_t ldy, const float* x, int64_t ldx, int64_t rows, bool accumulate) const {
  // Panel-major: a panel is read from memory once and stays in cache for the other rows.
  for (int64_t start = 0; start < out_; start += kPanel) {
    const int64_t width = std::min(kPanel, out_ - start), padded = round_up(width, kLanes);
    const PanelKernel kernel = panel_kernel(padded / kLanes);
    const float* panel = panels_.data() + start * in_;
    for (int64_t r = 0; r < rows; ++r)
      kernel(y + r * ldy + start, x + r * ldx, panel, padded, bias_.data() + start, in_, width, accumulate);
  }
}

void vector_matrix(float* y, const float* x, const float* a, int64_t ld, int64_t in, int64_t width) {
  static const float zeros[kPanel] = {};
  for (int64_t start = 0; start < width; start += kPanel) {
    const int64_t valid = std::min(kPanel, width - start);
    panel_kernel(round_up(valid, kLanes) / kLanes)(y + start, x, a + start, ld, zeros, in, valid, false);
  }
}

void linear_reference(float* y, const float* x, const float* weight, const float* bias, int64_t out, int64_t in,
                      bool accumulate) {
  for (int64_t o = 0; o < out; ++o) {
    float sum = bias ? bias[o] : 0.0f;
    for (int64_t i = 0; i < in; ++i) sum += x[i] * weight[o * in + i];
    y[o] = accumulate ? y[o] + sum : sum;
  }
}

}  // namespace mg
