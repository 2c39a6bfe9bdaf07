// Rotary position embedding (SPEC section 1). Pair i of a head vector at position p is
// rotated by angle p * base^(-2i/d); the table holds cos and sin of every angle, computed
// in double and rounded once to float32, so every implementation agrees to the bit.
#include "kernels/rope.h"

#include <cmath>
#include <string>

#include "tensor/error.h"

namespace mg {
namespace {

constexpr int64_t kParallelWork = 1 << 14;

}  // namespace

RopeTable make_rope_table(int64_t positions, int64_t head_width, double base) {
  if (head_width % 2 != 0)
    throw ShapeError("RoPE needs an even head width, found d=" + std::to_string(head_width));
  RopeTable table;
  table.positions = positions;
  table.head_width = head_width;
  const int64_t half = head_width / 2;
  table.cos.resize(positions * half);
  table.sin.resize(positions * half);
  for (int64_t p = 0; p < positions; ++p) {
    for (int64_t i = 0; i < half; ++i) {
      const double angle =
          static_cast<double>(p) * std::pow(base, -2.0 * static_cast<double>(i) / static_cast<double>(head_width));
      table.cos[p * half + i] = static_cast<float>(std::cos(angle));
      table.sin[p * half + i] = static_cast<float>(std::sin(angle));
    }
  }
  return table;
}

// x, out [rows, T, d]: (x0, x1) -> (x0 c - x1 s, x0 s + x1 c). Both inputs of a pair are read
// before either output is written, so out may alias x.
void rope_forward(float* out, const float* x, const RopeTable& table, int64_t rows, int64_t T, int64_t d,
                  int64_t offset) {
  MG_CHECK(table.head_width == d && offset + T <= table.positions, "RoPE table does not cover the input");
  const int64_t half = d / 2;
#pragma omp parallel for if (rows * T * d > kParallelWork)
  for (int64_t rt = 0; rt < rows * T; ++rt) {
    const int64_t p = offset + rt % T;
    const float* c = table.cos.data() + p * half;  // [d/2]
    const float* s = table.sin.data() + p * half;  // [d/2]
    const float* xv = x + rt * d;
    float* yv = out + rt * d;
    for (int64_t i = 0; i < half; ++i) {
      const float x0 = xv[2 * i], x1 = xv[2 * i + 1];
      yv[2 * i] = x0 * c[i] - x1 * s[i];
      yv[2 * i + 1] = x0 * s[i] + x1 * c[i];
    }
  }
}

// The forward is y = R(angle) x with R orthogonal, so dx = R(angle)^T dy = R(-angle) dy:
// (g0, g1) -> (g0 c + g1 s, -g0 s + g1 c).
namespace {

template <bool kAccumulate>
void rotate_back(float* dx, const float* dout, const RopeTable& table, int64_t rows, int64_t T, int64_t d,
                 int64_t offset) {
  MG_CHECK(table.head_width == d && offset + T <= table.positions, "RoPE table does not cover the input");
  const int64_t half = d / 2;
#pragma omp parallel for if (rows * T * d > kParallelWork)
  for (int64_t rt = 0; rt < rows * T; ++rt) {
    const int64_t p = offset + rt % T;
    const float* c = table.cos.data() + p * half;
    const float* s = table.sin.data() + p * half;
    const float* g = dout + rt * d;
    float* dxv = dx + rt * d;
    for (int64_t i = 0; i < half; ++i) {
      const float g0 = g[2 * i], g1 = g[2 * i + 1];
      const float d0 = g0 * c[i] + g1 * s[i], d1 = -g0 * s[i] + g1 * c[i];
      dxv[2 * i] = kAccumulate ? dxv[2 * i] + d0 : d0;
      dxv[2 * i + 1] = kAccumulate ? dxv[2 * i + 1] + d1 : d1;
    }
  }
}

}  // namespace

void rope_backward(float* dx, const float* dout, const RopeTable& table, int64_t rows, int64_t T, int64_t d,
                   int64_t offset) {
  rotate_back<true>(dx, dout, table, rows, T, d, offset);
}

void rope_backward_overwrite(float* dx, const float* dout, const RopeTable& table, int64_t rows, int64_t T,
                             int64_t d, int64_t offset) {
  rotate_back<false>(dx, dout, table, rows, T, d, offset);
}

}  // namespace mg
