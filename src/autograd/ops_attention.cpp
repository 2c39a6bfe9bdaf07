// The attention ops, in the order nn/attention.cpp calls them: qkv_heads (the three
// projections as one GEMM, split into heads and RoPE-rotated on the way out), select (its
// parts, as views), causal_attention_weights (softmax(q k^T / sqrt(d)) fused), and the
// composed forms the fused ones are tested against: split_heads / merge_heads (pure
// re-layouts), rope and causal_softmax. The weighted sum is matmul (ops_linear.cpp).
#include <algorithm>
#include <cstring>
#include <string>

#include "autograd/ops.h"
#include "kernels/elementwise.h"
#include "kernels/gemm.h"
#include "kernels/profile.h"
#include "kernels/softmax.h"
#include "core/error.h"

namespace mg {

Var qkv_heads(const Var& x, const Var& wq, const Var& wk, const Var& wv, int64_t n_head, const RopeTable* rope_table,
              int64_t position_offset) {
  const Shape& s = x.shape();
  if (s.size() != 3) throw ShapeError("qkv_heads: expected x [B,T,D], found " + shape_str(s));
  const int64_t B = s[0], T = s[1], D = s[2];
  for (const Var* w : {&wq, &wk, &wv})
    if (w->shape() != Shape{D, D})
      throw ShapeError("qkv_heads: x " + shape_str(s) + " needs weights [" + std::to_string(D) + "," +
                       std::to_string(D) + "], found " + shape_str(w->shape()));
  if (n_head <= 0 || D % n_head != 0)
    throw ShapeError("qkv_heads: width D=" + std::to_string(D) + " is not divisible by H=" + std::to_string(n_head) +
                     " heads");
  const int64_t H = n_head, d = D / H, rows = B * T;
  if (rope_table && (rope_table->head_width != d || position_offset < 0 ||
                     position_offset + T > rope_table->positions))
    throw ShapeError("qkv_heads: a RoPE table of head width " + std::to_string(rope_table->head_width) + " and " +
                     std::to_string(rope_table->positions) + " positions does not cover d=" + std::to_string(d) +
                     " at positions " + std::to_string(position_offset) + ".." + std::to_string(position_offset + T));

  // w_packed [3D,D] = [Wq; Wk; Wv], then y [rows,3D] = x w_packed^T in one GEMM.
  Tensor w_packed = Tensor::empty({3 * D, D});
  Tensor y = Tensor::empty({B, T, 3 * D});
  {
    ProfileScope scope(OpFamily::attention);
    std::memcpy(w_packed.data(), wq.value().data(), sizeof(float) * D * D);
    std::memcpy(w_packed.data() + D * D, wk.value().data(), sizeof(float) * D * D);
    std::memcpy(w_packed.data() + 2 * D * D, wv.value().data(), sizeof(float) * D * D);
  }
  matmul_2d(x.value().data(), w_packed.data(), y.data(), rows, 3 * D, D, false, true);

  Tensor out = Tensor::empty({3, B, H, T, d});
  {
    ProfileScope scope(OpFamily::attention);
    relayout_qkv(out.data(), y.data(), rope_table, B, T, H, d, position_offset, true);  // q, k rotated
    y = Tensor();  // back to the pool before the next op asks for one
  }

  if (!grad_enabled()) return make_result(out, {x, wq, wk, wv}, nullptr);
  RopeTable table = rope_table ? *rope_table : RopeTable{};  // a few kB: the graph may outlive the caller's
  return make_result(out, {x, wq, wk, wv},
                     [x, wq, wk, wv, w_packed, table, B, T, H, d, D, rows,
                      position_offset](const Tensor& dout) {
    // Undo the forward's steps in reverse: gather the heads into dy [rows,3D] rotating q and
    // k back (R(-angle)), then dx = dy w_packed and dw_packed = dy^T x.
    Tensor dy = Tensor::empty({B, T, 3 * D});
    {
      ProfileScope scope(OpFamily::attention);
      relayout_qkv(dy.data(), dout.data(), table.positions > 0 ? &table : nullptr, B, T, H, d, position_offset,
                   false);
    }
    if (x.requires_grad()) {  // dx [rows,D] (+)= dy [rows,3D] @ w_packed [3D,D]
      const GradOut dx = x.grad_out();
      matmul_2d(dy.data(), w_packed.data(), dx.data, rows, D, 3 * D, false, false, dx.accumulate ? 1.0f : 0.0f);
    }
    if (!wq.requires_grad() && !wk.requires_grad() && !wv.requires_grad()) return;
    Tensor dw_packed = Tensor::empty({3 * D, D});  // [3D,D] = dy^T [3D,rows] @ x [rows,D]
    matmul_2d(dy.data(), x.value().data(), dw_packed.data(), 3 * D, D, rows, true, false);
    ProfileScope scope(OpFamily::attention);
    const Var* weights[3] = {&wq, &wk, &wv};
    for (int64_t i = 0; i < 3; ++i) {
      if (!weights[i]->requires_grad()) continue;
      const GradOut dw = weights[i]->grad_out();
      add_scaled(dw.data, dw_packed.data() + i * D * D, 1.0f, D * D, dw.accumulate);
    }
  });
}

Var select(const Var& x, int64_t index) {
  const Shape& s = x.shape();
  if (s.empty() || index < 0 || index >= s[0])
    throw ShapeError("select: index " + std::to_string(index) + " out of range for " + shape_str(s));
  const Shape part_shape(s.begin() + 1, s.end());
  const int64_t n = shape_numel(part_shape);
  Tensor view = x.value().view(index * n, part_shape);
  return make_result(view, {x}, [x, index, n](const Tensor& dout) {
    // x[index] receives dout; the other parts of x's gradient are left as they are, so
    // a buffer not yet written starts at zero.
    ProfileScope scope(OpFamily::attention);
    add_scaled(x.grad_out().for_adding() + index * n, dout.data(), 1.0f, n, true);
  });
}

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

  return make_result(out, {x}, [x, B, T, H, d](const Tensor& dout) {
    ProfileScope scope(OpFamily::attention);
    // A pure re-layout: each coordinate's gradient goes back where the coordinate came from.
    const GradOut dx = x.grad_out();
    swap_middle_axes(dx.data, dout.data(), B, H, T, d, dx.accumulate);
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

  return make_result(out, {x}, [x, B, T, H, d](const Tensor& dout) {
    ProfileScope scope(OpFamily::attention);
    const GradOut dx = x.grad_out();
    swap_middle_axes(dx.data, dout.data(), B, T, H, d, dx.accumulate);
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
  return make_result(out, {x}, [x, table, rows, T, d, position_offset](const Tensor& dout) {
    ProfileScope scope(OpFamily::attention);
    const GradOut dx = x.grad_out();
    rope_backward(dx.data, dout.data(), table, rows, T, d, position_offset, dx.accumulate);
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
  return make_result(weights, {scores}, [scores, weights, batch, Tq, Tk](const Tensor& dout) {
    ProfileScope scope(OpFamily::softmax);
    const GradOut dscores = scores.grad_out();
    causal_softmax_backward(dscores.data, dout.data(), weights.data(), batch, Tq, Tk, 1.0f, dscores.accumulate);
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

  return make_result(weights, {q, k}, [q, k, weights, batch, Tq, Tk, d, scale](const Tensor& dout) {
    // ds = scale * w * (dw - <w, dw>) is the gradient of the scaled scores' pre-image
    // s = q k^T; then dq = ds k and dk = ds^T q.
    Tensor ds = Tensor::empty(weights.shape());  // [batch,Tq,Tk]
    {
      ProfileScope scope(OpFamily::softmax);
      causal_softmax_backward(ds.data(), dout.data(), weights.data(), batch, Tq, Tk, scale, false);
    }
    ProfileScope scope(OpFamily::attention);
    // d target [rows,d] (+)= op(ds) @ other, op(ds) = ds [Tq,Tk] or ds^T [Tk,Tq].
    auto ds_product = [&](const Var& target, const Var& other, bool transpose_ds, int64_t rows) {
      if (!target.requires_grad()) return;
      const GradOut g = target.grad_out();
      GemmArgs args = tight_gemm_args(transpose_ds, false, rows, d, transpose_ds ? Tq : Tk, batch);
      args.A = ds.data();
      args.B = other.value().data();
      args.C = g.data;
      args.beta = g.accumulate ? 1.0f : 0.0f;
      gemm(args);
    };
    ds_product(q, k, false, Tq);  // dq [Tq,d] (+)= ds [Tq,Tk] @ k [Tk,d]
    ds_product(k, q, true, Tk);   // dk [Tk,d] (+)= ds^T [Tk,Tq] @ q [Tq,d]
  });
}

Var causal_attention(const Var& qkv, float scale, Tensor* weights_out) {
  const Shape& s = qkv.shape();
  if (s.size() != 5 || s[0] != 3)
    throw ShapeError("causal_attention: expected qkv [3,B,H,T,d], found " + shape_str(s));
  const int64_t T = s[3], d = s[4], batch = s[1] * s[2];  // batch: B*H heads of [T,d]
  const int64_t part = batch * T * d;                      // one of q, k, v
  const float* q = qkv.value().data();
  const float* k = q + part;
  const float* v = q + 2 * part;

  // weights [B,H,T,T] = scale * q k^T, softmax row by row in place; out [B,H,T,d] = w v.
  Tensor weights = Tensor::empty({s[1], s[2], T, T});
  Tensor out = Tensor::empty({s[1], s[2], T, d});
  {
    ProfileScope scope(OpFamily::attention);
    GemmArgs g = tight_gemm_args(false, true, T, T, d, batch);
    g.alpha = scale;
    g.A = q, g.B = k, g.C = weights.data();
    gemm(g);
    {
      ProfileScope softmax_scope(OpFamily::softmax);
      causal_softmax_forward(weights.data(), weights.data(), batch, T, T);
    }
    g = tight_gemm_args(false, false, T, d, T, batch);
    g.A = weights.data(), g.B = v, g.C = out.data();
    gemm(g);
  }
  if (weights_out) *weights_out = weights;

  return make_result(out, {qkv}, [qkv, weights, batch, T, d, part, scale](const Tensor& dout) {
    ProfileScope scope(OpFamily::attention);
    const float* q = qkv.value().data();
    const float* k = q + part;
    const float* v = q + 2 * part;
    // dw [T,T] = dout [T,d] @ v^T, then ds = scale * w * (dw - <w, dw>) in its place.
    Tensor ds = Tensor::empty(weights.shape());
    GemmArgs g = tight_gemm_args(false, true, T, T, d, batch);
    g.A = dout.data(), g.B = v, g.C = ds.data();
    gemm(g);
    {
      ProfileScope softmax_scope(OpFamily::softmax);
      causal_softmax_backward(ds.data(), ds.data(), weights.data(), batch, T, T, scale, false);
    }
    // Each part of qkv's gradient is written by one product: all three add, or all overwrite.
    const GradOut dqkv = qkv.grad_out();
    auto product = [&](bool trans_a, const float* A, const float* B, int64_t which) {  // [T,T] x [T,d]
      GemmArgs p = tight_gemm_args(trans_a, false, T, d, T, batch);
      p.A = A, p.B = B, p.C = dqkv.data + which * part;
      p.beta = dqkv.accumulate ? 1.0f : 0.0f;
      gemm(p);
    };
    product(false, ds.data(), k, 0);            // dq = ds k
    product(true, ds.data(), q, 1);             // dk = ds^T q
    product(true, weights.data(), dout.data(), 2);  // dv = w^T dout
  });
}

}  // namespace mg
