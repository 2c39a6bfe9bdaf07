// Packing for the matrix-vector kernel (see packed_linear.h); the kernel itself, one panel
// against rows of x, is kernels/cpu/matvec.cpp, compiled once per CPU variant.
#include "kernels/packed_linear.h"

#include <algorithm>

#include "kernels/cpu_kernels.h"
#include "core/error.h"

namespace mg {
namespace {

constexpr int64_t kLanes = 8;   // floats per vector of the panel kernel
constexpr int64_t kPanel = 64;  // outputs per panel: 8 vectors of sums, half the AVX register file

int64_t round_up(int64_t n, int64_t to) { return (n + to - 1) / to * to; }

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
    matvec_panel(y + start, ldy, x, ldx, rows, panels_.data() + start * in_, padded, bias_.data() + start, in_, width,
                 accumulate);  // panel [in, padded]
  }
}

void matrix_product(float* y, int64_t ldy, const float* x, int64_t ldx, int64_t rows, const float* a, int64_t lda,
                    int64_t in, int64_t width) {
  static const float zeros[kPanel] = {};
  for (int64_t start = 0; start < width; start += kPanel) {
    const int64_t valid = std::min(kPanel, width - start);
    matvec_panel(y + start, ldy, x, ldx, rows, a + start, lda, zeros, in, valid, false);
  }
}

}  // namespace mg
