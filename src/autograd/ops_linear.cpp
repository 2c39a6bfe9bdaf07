// The affine ops: matmul, linear, add, scale. Products go through mg::gemm so the
// backend chosen at run time (set_gemm_backend) does the work, and the backward GEMMs
// use beta = 1 to accumulate straight into the inputs' gradient buffers.
// Backward lambdas capture input handles as `[x = x]`: a plain `[x]` copy of a `const Var&`
// stays const, and grad() (which allocates on first use) is non-const.
#include <algorithm>
#include <string>
#include <vector>

#include "autograd/ops.h"
#include "kernels/gemm.h"
#include "tensor/error.h"

namespace mg {
namespace {

constexpr int64_t kParallelWork = 1 << 15;

// C[i] (+)= op(A[i]) op(B[i]) for i < batch: A [M,K] (or [K,M] when trans_a), B [K,N]
// (or [N,K] when trans_b), C [M,N], all tight and laid out one after another.
void batched_gemm(bool trans_a, bool trans_b, int64_t batch, int64_t M, int64_t N, int64_t K, const float* A,
                  const float* B, float beta, float* C) {
  GemmArgs g = tight_gemm_args(trans_a, trans_b, M, N, K, batch);
  g.A = A;
  g.B = B;
  g.beta = beta;
  g.C = C;
  gemm(g);
}

// dst[c] += sum over r of src[r,c], src [rows,cols]. Each column sums its rows in order,
// so the result is the same for every thread count.
void add_row_sums(float* dst, const float* src, int64_t rows, int64_t cols) {
#pragma omp parallel for if (rows * cols > kParallelWork)
  for (int64_t c = 0; c < cols; ++c) {
    float sum = 0.0f;
    for (int64_t r = 0; r < rows; ++r) sum += src[r * cols + c];
    dst[c] += sum;
  }
}

// dst[i] += factor * src[i].
void add_scaled(float* dst, const float* src, float factor, int64_t n) {
#pragma omp parallel for if (n > kParallelWork)
  for (int64_t i = 0; i < n; ++i) dst[i] += factor * src[i];
}

}  // namespace

Var matmul(const Var& a, const Var& b, bool transpose_b) {
  const Shape& sa = a.shape();
  const Shape& sb = b.shape();
  const std::string both = "matmul: a " + shape_str(sa) + " and b" + (transpose_b ? "^T " : " ") + shape_str(sb);
  if (sa.size() < 2 || sb.size() < 2) throw ShapeError(both + ": both need at least 2 axes");
  const int64_t K = sa.back();
  const int64_t kb = transpose_b ? sb.back() : sb[sb.size() - 2];
  const int64_t N = transpose_b ? sb[sb.size() - 2] : sb.back();
  if (kb != K) throw ShapeError(both + ": inner sizes " + std::to_string(K) + " and " + std::to_string(kb) + " differ");

  // b 2-D: shared by every leading index of a, which then folds into one [rows,K] matrix.
  // Otherwise the leading axes must match and each index is one product of the batch.
  const bool shared_b = sb.size() == 2;
  if (!shared_b && Shape(sa.begin(), sa.end() - 2) != Shape(sb.begin(), sb.end() - 2))
    throw ShapeError(both + ": leading axes differ (b must share a's leading axes or be 2-D)");
  const int64_t M = shared_b ? a.value().numel() / K : sa[sa.size() - 2];
  const int64_t batch = shared_b ? 1 : a.value().numel() / (sa[sa.size() - 2] * K);

  Shape out_shape = sa;
  out_shape.back() = N;
  Tensor out = Tensor::empty(out_shape);
  batched_gemm(false, transpose_b, batch, M, N, K, a.value().data(), b.value().data(), 0.0f, out.data());

  return make_result(out, {a, b}, [a = a, b = b, transpose_b, batch, M, N, K](const Tensor& dout) mutable {
    // out = a @ op(b): da = dout @ op(b)^T, d op(b) = a^T @ dout.
    if (a.requires_grad())  // da [M,K] += dout [M,N] @ op(b)^T
      batched_gemm(false, !transpose_b, batch, M, K, N, dout.data(), b.value().data(), 1.0f, a.grad().data());
    if (b.requires_grad()) {
      if (transpose_b)  // db [N,K] += dout^T [N,M] @ a [M,K]
        batched_gemm(true, false, batch, N, K, M, dout.data(), a.value().data(), 1.0f, b.grad().data());
      else  // db [K,N] += a^T [K,M] @ dout [M,N]
        batched_gemm(true, false, batch, K, N, M, a.value().data(), dout.data(), 1.0f, b.grad().data());
    }
  });
}

Var linear(const Var& x, const Var& weight, const Var& bias) {
  const Shape& sx = x.shape();
  const Shape& sw = weight.shape();
  if (sx.empty() || sw.size() != 2 || sw[1] != sx.back())
    throw ShapeError("linear: x " + shape_str(sx) + " does not fit weight " + shape_str(sw) +
                     " (expected weight [out," + std::to_string(sx.empty() ? 0 : sx.back()) + "])");
  const int64_t in = sw[1], out_width = sw[0];
  if (bias.defined() && bias.shape() != Shape{out_width})
    throw ShapeError("linear: bias " + shape_str(bias.shape()) + " does not fit weight " + shape_str(sw) +
                     " (expected [" + std::to_string(out_width) + "])");
  const int64_t rows = x.value().numel() / in;

  Shape out_shape = sx;
  out_shape.back() = out_width;
  Tensor out = Tensor::empty(out_shape);
  // Start every row at the bias and let the GEMM add x W^T on top (beta = 1).
  if (bias.defined()) {
    const float* b = bias.value().data();
    for (int64_t r = 0; r < rows; ++r) std::copy(b, b + out_width, out.data() + r * out_width);
  }
  batched_gemm(false, true, 1, rows, out_width, in, x.value().data(), weight.value().data(),
               bias.defined() ? 1.0f : 0.0f, out.data());

  std::vector<Var> inputs{x, weight};
  if (bias.defined()) inputs.push_back(bias);
  return make_result(out, std::move(inputs), [x = x, weight = weight, bias = bias, rows, in, out_width](const Tensor& dout) mutable {
    // out [rows,out] = x [rows,in] @ W^T + b.
    if (x.requires_grad())  // dx [rows,in] += dout [rows,out] @ W [out,in]
      batched_gemm(false, false, 1, rows, in, out_width, dout.data(), weight.value().data(), 1.0f, x.grad().data());
    if (weight.requires_grad())  // dW [out,in] += dout^T [out,rows] @ x [rows,in]
      batched_gemm(true, false, 1, out_width, in, rows, dout.data(), x.value().data(), 1.0f, weight.grad().data());
    if (bias.requires_grad())  // db [out] += sum over rows of dout
      add_row_sums(bias.grad().data(), dout.data(), rows, out_width);
  });
}

Var add(const Var& a, const Var& b) {
  const Shape& sa = a.shape();
  const Shape& sb = b.shape();
  // b must be a's shape or a's trailing axes: a viewed as [rows, b.numel()].
  const bool trailing = sb.size() <= sa.size() && std::equal(sb.begin(), sb.end(), sa.end() - sb.size());
  if (!trailing)
    throw ShapeError("add: b " + shape_str(sb) + " is neither a's shape " + shape_str(sa) + " nor its trailing axes");
  const int64_t cols = b.value().numel();
  const int64_t n = a.value().numel();
  const int64_t rows = cols == 0 ? 0 : n / cols;

  Tensor out = Tensor::empty(sa);
  const float* pa = a.value().data();
  const float* pb = b.value().data();
  float* po = out.data();
#pragma omp parallel for if (n > kParallelWork)
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) po[r * cols + c] = pa[r * cols + c] + pb[c];

  return make_result(out, {a, b}, [a = a, b = b, rows, cols](const Tensor& dout) mutable {
    // d(a + b) = dout for a; for a broadcast b, the sum of dout over the rows it was added to.
    if (a.requires_grad()) add_scaled(a.grad().data(), dout.data(), 1.0f, dout.numel());
    if (b.requires_grad()) add_row_sums(b.grad().data(), dout.data(), rows, cols);
  });
}

Var scale(const Var& x, float factor) {
  const int64_t n = x.value().numel();
  Tensor out = Tensor::empty(x.shape());
  const float* px = x.value().data();
  float* po = out.data();
#pragma omp parallel for if (n > kParallelWork)
  for (int64_t i = 0; i < n; ++i) po[i] = factor * px[i];

  return make_result(out, {x}, [x = x, factor](const Tensor& dout) mutable {
    add_scaled(x.grad().data(), dout.data(), factor, dout.numel());  // d(f x) = f dout
  });
}

}  // namespace mg
