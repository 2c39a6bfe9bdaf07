// The attention-specific ops: split_heads / merge_heads (pure re-layouts), rope,
// causal_softmax and the fused causal_attention_weights. The re-layouts move whole head vectors of d floats; their backward is
// the opposite re-layout, accumulated.
// Backward lambdas capture input handles as `[x = x]`: a plain `[x]` copy of a `const Var&`
// stays const, and grad() (which allocates on first use) is non-const.
#include <algorithm>
#include <cstring>
#include <string>

#include "autograd/ops.h"
#include "kernels/gemm.h"
#include "kernels/profile.h"
#include "kernels/softmax.h"
#include "core/error.h"

namespace mg {
namespace {

constexpr int64_t kParallelWork = 1 << 15;

// in [outer, n1, n2, d] -> out [outer, n2, n1, d]: swaps the two middle axes, moving
// vectors of d floats. accumulate: out += instead of out =.
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

}  // namespace

Var split_heads(const Var& x, int64_t n_head) {
  const Shape& s = x.shape();
  if (s.size() != 3) throw ShapeError("split_heads: expected x [B,T,D], found " + shape_str(s));
  const int64_t B = s[0], T = s[1], D = s[2];
  if (n_head <= 0 || D % n_head != 0)
    throw ShapeError("split_heads: width D=" + std::to_string(D) + " is not divisible by H=" +
                     std::to_string(n_head) + " heads");
  const int64_t H = n_head, d = D / H;
  ProfileScope scope(OpFamily::attention);

  // x [B,T,D] is [B,T,H,d] in memory; swapping T and H gives [B,H,T,d].
  Tensor out = Tensor::empty({B, H, T, d});
  swap_middle_axes(out.data(), x.value().data(), B, T, H, d, false);

  return make_result(out, {x}, [x = x, B, T, H, d](const Tensor& dout) mutable {
    ProfileScope scope(OpFamily::attention);
    // A pure re-layout: each coordinate's gradient goes back where the coordinate came from.
    bool accumulate = false;
    float* dx = x.grad_sink(accumulate);
    swap_middle_axes(dx, dout.data(), B, H, T, d, accumulate);
  });
}

Var merge_heads(const Var& x) {
  const Shape& s = x.shape();
  if (s.size() != 4) throw ShapeError("merge_heads: expected x [B,H,T,d], found " + shape_str(s));
  const int64_t B = s[0], H = s[1], T = s[2], d = s[3];
  ProfileScope scope(OpFamily::attention);

  // [B,H,T,d] -> [B,T,H,d], which is [B,T,D] in memory with D = H*d.
  Tensor out = Tensor::empty({B, T, H * d});
  swap_middle_axes(out.data(), x.value().data(), B, H, T, d, false);

  return make_result(out, {x}, [x = x, B, T, H, d](const Tensor& dout) mutable {
    ProfileScope scope(OpFamily::attention);
    bool accumulate = false;
    float* dx = x.grad_sink(accumulate);
    swap_middle_axes(dx, dout.data(), B, T, H, d, accumulate);
  });
}

Var rope(const Var& x, const RopeTable& table, int64_t position_offset) {
  const Shape& s = x.shape();
  if (s.size() < 2) throw ShapeError("rope: expected x [...,T,d], found " + shape_str(s));
  const int64_t T = s[s.size() - 2], d = s.back();
  if (d != table.head_width || position_offset < 0 || position_offset + T > table.positions)
    throw ShapeError("rope: x " + shape_str(s) + " at offset " + std::to_string(position_offset) +
                     " needs a table of head width " + std::to_string(d) + " and " +
                     std::to_string(position_offset + T) + " positions, found width " +
                     std::to_string(table.head_width) + " and " + std::to_string(table.positions) + " positions");
  const int64_t rows = T * d == 0 ? 0 : x.value().numel() / (T * d);  // B*H
  ProfileScope scope(OpFamily::attention);

  Tensor out = Tensor::empty(s);
  rope_forward(out.data(), x.value().data(), table, rows, T, d, position_offset);

  // The backward keeps its own copy of the table (a few kB), so the caller's table need
  // not outlive the graph; no copy when nothing will be recorded.
  if (!grad_enabled() || !x.requires_grad()) return make_result(out, {x}, nullptr);
  return make_result(out, {x}, [x = x, table, rows, T, d, position_offset](const Tensor& dout) mutable {
    ProfileScope scope(OpFamily::attention);
    bool accumulate = false;
    float* dx = x.grad_sink(accumulate);
    (accumulate ? rope_backward : rope_backward_overwrite)(dx, dout.data(), table, rows, T, d, position_offset);
  });
}

Var causal_softmax(const Var& scores) {
  const Shape& s = scores.shape();
  if (s.size() < 2) throw ShapeError("causal_softmax: expected scores [...,Tq,Tk], found " + shape_str(s));
  const int64_t Tq = s[s.size() - 2], Tk = s.back();
  if (Tq > Tk)
    throw ShapeError("causal_softmax: scores " + shape_str(s) + " have more queries (" + std::to_string(Tq) +
                     ") than keys (" + std::to_string(Tk) + ")");
  const int64_t batch = Tq * Tk == 0 ? 0 : scores.value().numel() / (Tq * Tk);
  ProfileScope scope(OpFamily::softmax);

  Tensor weights = Tensor::empty(s);
  causal_softmax_forward(weights.data(), scores.value().data(), batch, Tq, Tk);

  // The backward needs only the weights it produced (see the kernel for the formula).
  return make_result(weights, {scores}, [scores = scores, weights, batch, Tq, Tk](const Tensor& dout) mutable {
    ProfileScope scope(OpFamily::softmax);
    causal_softmax_backward(scores.grad().data(), dout.data(), weights.data(), batch, Tq, Tk);
  });
}

Var causal_attention_weights(const Var& q, const Var& k, float scale) {
  const Shape& sq = q.shape();
  const Shape& sk = k.shape();
  if (sq.size() < 2 || sk.size() != sq.size() || !std::equal(sq.begin(), sq.end() - 2, sk.begin()) ||
      sq.back() != sk.back() || sq[sq.size() - 2] > sk[sk.size() - 2])
    throw ShapeError("causal_attention_weights: q " + shape_str(sq) + " and k " + shape_str(sk) +
                     " must be [...,Tq,d] and [...,Tk,d] with equal leading axes and Tq <= Tk");
  const int64_t Tq = sq[sq.size() - 2], Tk = sk[sk.size() - 2], d = sq.back();
  const int64_t batch = Tq * d == 0 ? 0 : q.value().numel() / (Tq * d);
  Shape out_shape = sq;
  out_shape.back() = Tk;

  // weights [batch,Tq,Tk] = scale * q k^T, then softmax row by row in place.
  Tensor weights = Tensor::empty(out_shape);
  {
    ProfileScope scope(OpFamily::attention);
    GemmArgs g = tight_gemm_args(false, true, Tq, Tk, d, batch);
    g.alpha = scale;
    g.A = q.value().data();
    g.B = k.value().data();
    g.C = weights.data();
    gemm(g);
  }
  {
    ProfileScope scope(OpFamily::softmax);
    causal_softmax_forward(weights.data(), weights.data(), batch, Tq, Tk);
  }

  return make_result(weights, {q, k}, [q = q, k = k, weights, batch, Tq, Tk, d, scale](const Tensor& dout) mutable {
    // ds = scale * w * (dw - <w, dw>) is the gradient of the scaled scores' pre-image
    // s = q k^T; then dq = ds k and dk = ds^T q.
    Tensor ds = Tensor::empty(weights.shape());  // [batch,Tq,Tk]
    {
      ProfileScope scope(OpFamily::softmax);
      causal_softmax_backward_scaled(ds.data(), dout.data(), weights.data(), batch, Tq, Tk, scale);
    }
    ProfileScope scope(OpFamily::attention);
    bool accumulate = false;
    if (q.requires_grad()) {  // dq [Tq,d] (+)= ds [Tq,Tk] @ k [Tk,d]
      GemmArgs g = tight_gemm_args(false, false, Tq, d, Tk, batch);
      g.A = ds.data();
      g.B = k.value().data();
      g.C = q.grad_sink(accumulate);
      g.beta = accumulate ? 1.0f : 0.0f;
      gemm(g);
    }
    if (k.requires_grad()) {  // dk [Tk,d] (+)= ds^T [Tk,Tq] @ q [Tq,d]
      GemmArgs g = tight_gemm_args(true, false, Tk, d, Tq, batch);
      g.A = ds.data();
      g.B = q.value().data();
      g.C = k.grad_sink(accumulate);
      g.beta = accumulate ? 1.0f : 0.0f;
      gemm(g);
    }
  });
}

}  // namespace mg
