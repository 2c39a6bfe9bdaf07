// The affine ops: matmul, linear, linear_residual, the fused MLP, add, scale. Products go through mg::gemm so the
// backend chosen at run time (set_gemm_backend) does the work; a backward GEMM's beta is
// the gradient rule's flag (1 adds into the gradient, 0 overwrites it).
#include <algorithm>
#include <string>
#include <vector>

#include "autograd/ops.h"
#include "kernels/elementwise.h"
#include "kernels/gelu.h"
#include "kernels/gemm.h"
#include "core/error.h"

namespace mg {
namespace {

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

// The GEMM's beta for a gradient that is added into (1) or written fresh (0).
float beta_for(bool accumulate) { return accumulate ? 1.0f : 0.0f; }

// The output shape of x [...,in] @ W^T [in,out] (+ b [out]), or a ShapeError naming `op`.
Shape linear_output_shape(const char* op, const Shape& sx, const Var& weight, const Var& bias) {
  const Shape& sw = weight.shape();
  if (sx.empty() || sw.size() != 2 || sw[1] != sx.back())
    throw ShapeError(std::string(op) + ": x " + shape_str(sx) + " does not fit weight " + shape_str(sw) +
                     " (expected weight [out," + std::to_string(sx.empty() ? 0 : sx.back()) + "])");
  if (bias.defined() && bias.shape() != Shape{sw[0]})
    throw ShapeError(std::string(op) + ": bias " + shape_str(bias.shape()) + " does not fit weight " + shape_str(sw) +
                     " (expected [" + std::to_string(sw[0]) + "])");
  Shape out = sx;
  out.back() = sw[0];
  return out;
}

// The gradients of out [rows,out] = x [rows,in] @ W^T + b (+ residual, handled by the
// caller), shared by linear and linear_residual.
void linear_backward(const Var& x, const Var& weight, const Var& bias, const Tensor& dout, int64_t rows, int64_t in,
                     int64_t out_width) {
  if (x.requires_grad()) {  // dx [rows,in] (+)= dout [rows,out] @ W [out,in]
    const GradOut dx = x.grad_out();
    batched_gemm(false, false, 1, rows, in, out_width, dout.data(), weight.value().data(), beta_for(dx.accumulate),
                 dx.data);
  }
  if (weight.requires_grad()) {  // dW [out,in] (+)= dout^T [out,rows] @ x [rows,in]
    const GradOut dweight = weight.grad_out();
    batched_gemm(true, false, 1, out_width, in, rows, dout.data(), x.value().data(), beta_for(dweight.accumulate),
                 dweight.data);
  }
  if (bias.requires_grad()) {  // db [out] (+)= sum over rows of dout
    const GradOut dbias = bias.grad_out();
    sum_rows(dbias.data, dout.data(), rows, out_width, dbias.accumulate);
  }
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

  return make_result(out, {a, b}, [a, b, transpose_b, batch, M, N, K](const Tensor& dout) {
    // out = a @ op(b): da = dout @ op(b)^T, d op(b) = a^T @ dout.
    if (a.requires_grad()) {  // da [M,K] (+)= dout [M,N] @ op(b)^T
      const GradOut da = a.grad_out();
      batched_gemm(false, !transpose_b, batch, M, K, N, dout.data(), b.value().data(), beta_for(da.accumulate), da.data);
    }
    if (b.requires_grad()) {
      // A shared 2-D b was folded into one product (batch 1); else entries are disjoint.
      const GradOut db = b.grad_out();
      if (transpose_b)  // db [N,K] (+)= dout^T [N,M] @ a [M,K]
        batched_gemm(true, false, batch, N, K, M, dout.data(), a.value().data(), beta_for(db.accumulate), db.data);
      else  // db [K,N] (+)= a^T [K,M] @ dout [M,N]
        batched_gemm(true, false, batch, K, N, M, a.value().data(), dout.data(), beta_for(db.accumulate), db.data);
    }
  });
}

namespace {

// out [rows,out] = x [rows,in] W^T (+ bias) (+ residual) in one GEMM: the bias and the
// residual are its epilogue, so neither costs a pass of its own.
Tensor linear_forward(const Tensor& x, const Tensor& weight, const float* bias, const float* residual,
                      const Shape& out_shape) {
  const int64_t in = weight.dim(1), out_width = weight.dim(0);
  Tensor out = Tensor::empty(out_shape);
  GemmArgs g = tight_gemm_args(false, true, x.numel() / in, out_width, in);
  g.A = x.data();
  g.B = weight.data();
  g.C = out.data();
  g.bias = bias;
  g.addend = residual;
  gemm(g);
  return out;
}

const float* data_or_null(const Var& v) { return v.defined() ? v.value().data() : nullptr; }

}  // namespace

Var linear(const Var& x, const Var& weight, const Var& bias) {
  const Shape out_shape = linear_output_shape("linear", x.shape(), weight, bias);
  const int64_t in = weight.shape()[1], out_width = weight.shape()[0];
  const int64_t rows = x.value().numel() / in;
  Tensor out = linear_forward(x.value(), weight.value(), data_or_null(bias), nullptr, out_shape);

  std::vector<Var> inputs{x, weight};
  if (bias.defined()) inputs.push_back(bias);
  return make_result(out, std::move(inputs), [x, weight, bias, rows, in, out_width](const Tensor& dout) {
    linear_backward(x, weight, bias, dout, rows, in, out_width);
  });
}

Var linear_residual(const Var& residual, const Var& x, const Var& weight, const Var& bias) {
  const Shape out_shape = linear_output_shape("linear_residual", x.shape(), weight, bias);
  const int64_t in = weight.shape()[1], out_width = weight.shape()[0];
  if (residual.shape() != out_shape)
    throw ShapeError("linear_residual: residual " + shape_str(residual.shape()) + " does not fit the output " +
                     shape_str(out_shape));
  const int64_t rows = x.value().numel() / in;
  Tensor out = linear_forward(x.value(), weight.value(), data_or_null(bias), residual.value().data(), out_shape);

  std::vector<Var> inputs{residual, x, weight};
  if (bias.defined()) inputs.push_back(bias);
  return make_result(out, std::move(inputs),
                     [residual, x, weight, bias, rows, in, out_width](const Tensor& dout) {
    linear_backward(x, weight, bias, dout, rows, in, out_width);
    if (residual.requires_grad()) {  // d residual (+)= dout
      const GradOut dresidual = residual.grad_out();
      add_scaled(dresidual.data, dout.data(), 1.0f, dout.numel(), dresidual.accumulate);
    }
  });
}

Var mlp_residual(const Var& residual, const Var& x, const Var& fc_weight, const Var& fc_bias,
                 const Var& proj_weight, const Var& proj_bias) {
  const Shape hidden_shape = linear_output_shape("mlp_residual", x.shape(), fc_weight, fc_bias);
  const Shape out_shape = linear_output_shape("mlp_residual", hidden_shape, proj_weight, proj_bias);
  if (residual.shape() != out_shape)
    throw ShapeError("mlp_residual: residual " + shape_str(residual.shape()) + " does not fit the output " +
                     shape_str(out_shape));
  const int64_t D = fc_weight.shape()[1], F = fc_weight.shape()[0];  // in, hidden widths
  const int64_t rows = x.value().numel() / D;

  // pre [rows,F] = x W1^T + b1; hidden = GELU(pre), and pre's storage then holds the slope
  // GELU'(pre), all the backward needs of it; out = residual + hidden W2^T + b2.
  Tensor slope = linear_forward(x.value(), fc_weight.value(), data_or_null(fc_bias), nullptr, hidden_shape);
  Tensor hidden = Tensor::empty(hidden_shape);
  gelu_forward_with_slope(hidden.data(), slope.data(), slope.data(), slope.numel());
  Tensor out = linear_forward(hidden, proj_weight.value(), data_or_null(proj_bias), residual.value().data(), out_shape);

  std::vector<Var> inputs{residual, x, fc_weight, proj_weight};
  if (fc_bias.defined()) inputs.push_back(fc_bias);
  if (proj_bias.defined()) inputs.push_back(proj_bias);
  return make_result(out, std::move(inputs), [residual, x, fc_weight, fc_bias, proj_weight, proj_bias, slope, hidden,
                                               rows, D, F](const Tensor& dout) {
    if (residual.requires_grad()) {  // d residual (+)= dout
      const GradOut dresidual = residual.grad_out();
      add_scaled(dresidual.data, dout.data(), 1.0f, dout.numel(), dresidual.accumulate);
    }
    if (proj_weight.requires_grad()) {  // dW2 [D,F] (+)= dout^T [D,rows] @ hidden [rows,F]
      const GradOut dw = proj_weight.grad_out();
      batched_gemm(true, false, 1, D, F, rows, dout.data(), hidden.data(), beta_for(dw.accumulate), dw.data);
    }
    if (proj_bias.requires_grad()) {  // db2 [D] (+)= sum over rows of dout
      const GradOut db = proj_bias.grad_out();
      sum_rows(db.data, dout.data(), rows, D, db.accumulate);
    }
    // dpre [rows,F] = (dout [rows,D] @ W2 [D,F]) * slope: GELU's backward as the GEMM's
    // multiplier, then the first layer's gradients as linear's.
    Tensor dpre = Tensor::empty(slope.shape());
    GemmArgs g = tight_gemm_args(false, false, rows, F, D);
    g.A = dout.data();
    g.B = proj_weight.value().data();
    g.C = dpre.data();
    g.multiplier = slope.data();
    gemm(g);
    linear_backward(x, fc_weight, fc_bias, dpre, rows, D, F);
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
  add_broadcast_rows(out.data(), a.value().data(), b.value().data(), rows, cols);

  return make_result(out, {a, b}, [a, b, rows, cols](const Tensor& dout) {
    // d(a + b) = dout for a; for a broadcast b, the sum of dout over the rows it was added to.
    if (a.requires_grad()) {
      const GradOut da = a.grad_out();
      add_scaled(da.data, dout.data(), 1.0f, dout.numel(), da.accumulate);
    }
    if (b.requires_grad()) {
      const GradOut db = b.grad_out();
      sum_rows(db.data, dout.data(), rows, cols, db.accumulate);
    }
  });
}

Var scale(const Var& x, float factor) {
  const int64_t n = x.value().numel();
  Tensor out = Tensor::empty(x.shape());
  add_scaled(out.data(), x.value().data(), factor, n, false);

  return make_result(out, {x}, [x, factor](const Tensor& dout) {
    const GradOut dx = x.grad_out();
    add_scaled(dx.data, dout.data(), factor, dout.numel(), dx.accumulate);  // d(f x) = f dout
  });
}

}  // namespace mg
