// The attention ops, in the order nn/gpt.cpp's causal_self_attention calls them:
// qkv_projection (the three projections as one GEMM), split_qkv_heads (the heads of its
// rows, q and k RoPE-rotated on the way out), select (their parts, as views),
// causal_attention_weights (softmax(q k^T / sqrt(d)) fused), and causal_attention, the whole
// of attention from the rows to the merged heads in one kernel (kernels/fused_attention.h,
// its body kernels/cpu/fused_attention.cpp); then the composed forms the fused ones are
// tested against: split_heads / merge_heads (pure re-layouts), rope and causal_softmax. The
// weighted sum of the composed form is matmul (ops_linear.cpp).
#include <algorithm>
#include <cstring>
#include <string>

#include "autograd/ops.h"
#include "kernels/elementwise.h"
#include "kernels/fused_attention.h"
#include "kernels/gemm.h"
#include "kernels/rope.h"
#include "kernels/softmax.h"
#include "core/error.h"

namespace mg {

Var qkv_projection(const Var& x, const Var& wq, const Var& wk, const Var& wv) {
  const Shape& s = x.shape();
  if (s.size() != 3) throw ShapeError("qkv_projection: expected x [B,T,D], found " + shape_str(s));
  const int64_t B = s[0], T = s[1], D = s[2], rows = B * T;
  for (const Var* w : {&wq, &wk, &wv})
    if (w->shape() != Shape{D, D})
      throw ShapeError("qkv_projection: x " + shape_str(s) + " needs weights [" + std::to_string(D) + "," +
                       std::to_string(D) + "], found " + shape_str(w->shape()));

  // w_packed [3D,D] = [Wq; Wk; Wv], then out [rows,3D] = x w_packed^T in one GEMM.
  Tensor w_packed = Tensor::empty({3 * D, D});
  std::memcpy(w_packed.data(), wq.value().data(), sizeof(float) * D * D);
  std::memcpy(w_packed.data() + D * D, wk.value().data(), sizeof(float) * D * D);
  std::memcpy(w_packed.data() + 2 * D * D, wv.value().data(), sizeof(float) * D * D);
  Tensor out = Tensor::empty({B, T, 3 * D});
  matmul_2d(x.value().data(), w_packed.data(), out.data(), rows, 3 * D, D, {.trans_b = true});

  return make_result(out, {x, wq, wk, wv}, [x, wq, wk, wv, w_packed, D, rows](const Tensor& dout) {
    if (x.requires_grad()) {  // dx [rows,D] (+)= dout [rows,3D] @ w_packed [3D,D]
      const GradOut dx = x.grad_out();
      matmul_2d(dout.data(), w_packed.data(), dx.data, rows, D, 3 * D, {}, dx.accumulate ? 1.0f : 0.0f);
    }
    if (!wq.requires_grad() && !wk.requires_grad() && !wv.requires_grad()) return;
    Tensor dw_packed = Tensor::empty({3 * D, D});  // [3D,D] = dout^T [3D,rows] @ x [rows,D]
    matmul_2d(dout.data(), x.value().data(), dw_packed.data(), 3 * D, D, rows, {.trans_a = true});
    const Var* weights[3] = {&wq, &wk, &wv};
    for (int64_t i = 0; i < 3; ++i) {
      if (!weights[i]->requires_grad()) continue;
      const GradOut dw = weights[i]->grad_out();
      add_scaled(dw.data, dw_packed.data() + i * D * D, 1.0f, D * D, dw.accumulate);
    }
  });
}

namespace {

// The heads' shape of qkv [B,T,3D] (H heads of width d), or a ShapeError naming `op`; and
// that a RoPE table covers positions offset .. offset+T-1.
AttentionShape qkv_shape(const char* op, const Var& qkv, int64_t n_head, const RopeTable* table, int64_t offset) {
  const Shape& s = qkv.shape();
  if (s.size() != 3 || s[2] % 3 != 0)
    throw ShapeError(std::string(op) + ": expected qkv [B,T,3D], found " + shape_str(s));
  const int64_t D = s[2] / 3;
  if (n_head <= 0 || D % n_head != 0)
    throw ShapeError(std::string(op) + ": width D=" + std::to_string(D) + " is not divisible by H=" +
                     std::to_string(n_head) + " heads");
  const AttentionShape shape{s[0], s[1], n_head, D / n_head};
  if (table && (table->head_width != shape.d || offset < 0 || offset + shape.T > table->positions))
    throw ShapeError(std::string(op) + ": a RoPE table of head width " + std::to_string(table->head_width) +
                     " and " + std::to_string(table->positions) + " positions does not cover d=" +
                     std::to_string(shape.d) + " at positions " + std::to_string(offset) + ".." +
                     std::to_string(offset + shape.T));
  return shape;
}

}  // namespace

Var split_qkv_heads(const Var& qkv, int64_t n_head, const RopeTable* rope_table, int64_t position_offset) {
  const AttentionShape s = qkv_shape("split_qkv_heads", qkv, n_head, rope_table, position_offset);
  Tensor out = Tensor::empty({3, s.B, s.H, s.T, s.d});
  relayout_qkv(out.data(), qkv.value().data(), rope_table, s.B, s.T, s.H, s.d, position_offset, true);

  if (!grad_enabled()) return make_result(out, {qkv}, nullptr);
  RopeTable table = rope_table ? *rope_table : RopeTable{};  // a few kB: the graph may outlive the caller's
  return make_result(out, {qkv}, [qkv, table, s, position_offset](const Tensor& dout) {
    // The rows back from the heads, q and k rotated back (R(-angle)). relayout_qkv writes
    // every element of the rows, so a gradient that already holds some goes through a copy.
    const GradOut dqkv = qkv.grad_out();
    Tensor rows = dqkv.accumulate ? Tensor::empty(qkv.shape()) : Tensor();
    relayout_qkv(dqkv.accumulate ? rows.data() : dqkv.data, dout.data(), table.positions > 0 ? &table : nullptr,
                 s.B, s.T, s.H, s.d, position_offset, false);
    if (dqkv.accumulate) add_scaled(dqkv.data, rows.data(), 1.0f, rows.numel(), true);
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

  // x [B,T,D] is [B,T,H,d] in memory; swapping T and H gives [B,H,T,d].
  Tensor out = Tensor::empty({B, H, T, d});
  swap_middle_axes(out.data(), x.value().data(), B, T, H, d, false);

  return make_result(out, {x}, [x, B, T, H, d](const Tensor& dout) {
    // A pure re-layout: each coordinate's gradient goes back where the coordinate came from.
    const GradOut dx = x.grad_out();
    swap_middle_axes(dx.data, dout.data(), B, H, T, d, dx.accumulate);
  });
}

Var merge_heads(const Var& x) {
  const Shape& s = x.shape();
  if (s.size() != 4) throw ShapeError("merge_heads: expected x [B,H,T,d], found " + shape_str(s));
  const int64_t B = s[0], H = s[1], T = s[2], d = s[3];

  // [B,H,T,d] -> [B,T,H,d], which is [B,T,D] in memory with D = H*d.
  Tensor out = Tensor::empty({B, T, H * d});
  swap_middle_axes(out.data(), x.value().data(), B, H, T, d, false);

  return make_result(out, {x}, [x, B, T, H, d](const Tensor& dout) {
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

  Tensor out = Tensor::empty(s);
  rope_forward(out.data(), x.value().data(), table, rows, T, d, position_offset);

  // The backward keeps its own copy of the table (a few kB), so the caller's table need
  // not outlive the graph; no copy when nothing will be recorded.
  if (!grad_enabled() || !x.requires_grad()) return make_result(out, {x}, nullptr);
  return make_result(out, {x}, [x, table, rows, T, d, position_offset](const Tensor& dout) {
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

  Tensor weights = Tensor::empty(s);
  causal_softmax_forward(weights.data(), scores.value().data(), batch, Tq, Tk);

  // The backward needs only the weights it produced (see the kernel for the formula).
  return make_result(weights, {scores}, [scores, weights, batch, Tq, Tk](const Tensor& dout) {
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
    GemmArgs g = tight_gemm_args({.trans_b = true}, Tq, Tk, d, batch);
    g.alpha = scale;
    g.A = q.value().data();
    g.B = k.value().data();
    g.C = weights.data();
    gemm(g);
  }
  causal_softmax_forward(weights.data(), weights.data(), batch, Tq, Tk);

  return make_result(weights, {q, k}, [q, k, weights, batch, Tq, Tk, d, scale](const Tensor& dout) {
    // ds = scale * w * (dw - <w, dw>) is the gradient of the scaled scores' pre-image
    // s = q k^T; then dq = ds k and dk = ds^T q.
    Tensor ds = Tensor::empty(weights.shape());  // [batch,Tq,Tk]
    causal_softmax_backward(ds.data(), dout.data(), weights.data(), batch, Tq, Tk, scale, false);
    // d target [rows,d] (+)= op(ds) @ other, op(ds) = ds [Tq,Tk] or ds^T [Tk,Tq].
    auto ds_product = [&](const Var& target, const Var& other, bool transpose_ds, int64_t rows) {
      if (!target.requires_grad()) return;
      const GradOut g = target.grad_out();
      GemmArgs args = tight_gemm_args({.trans_a = transpose_ds}, rows, d, transpose_ds ? Tq : Tk, batch);
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

Var causal_attention(const Var& qkv, int64_t n_head, const RopeTable* rope_table, float scale,
                     Tensor* weights_out) {
  const AttentionShape s = qkv_shape("causal_attention", qkv, n_head, rope_table, 0);
  Tensor merged = Tensor::empty({s.B, s.T, s.H * s.d});
  // The weights [B,H,T,T] are written out only for a reader. The backward needs them, but
  // makes each head's again from q and k (the forward's own code on the same q and k: the
  // same bits) rather than keeping B H T^2 floats per layer from the forward to the backward,
  // 1 MiB a layer of the default step's 38.6 MiB; a reader's copy, there anyway, is used.
  Tensor weights = weights_out ? Tensor::empty({s.B, s.H, s.T, s.T}) : Tensor();
  const AttentionWorkspace work = attention_workspace(s, rope_table, 2);
  attention_heads_forward(merged.data(), weights_out ? weights.data() : nullptr, qkv.value().data(), work.cos_pairs,
                          work.sin_pairs, scale, s.B, s.T, s.H, s.d, work.scratch, work.threads);
  if (weights_out) *weights_out = weights;

  if (!grad_enabled()) return make_result(merged, {qkv}, nullptr);
  RopeTable table = rope_table ? *rope_table : RopeTable{};  // a few kB: the graph may outlive the caller's
  return make_result(merged, {qkv}, [qkv, weights, table, scale, s](const Tensor& dout) {
    const GradOut dqkv = qkv.grad_out();
    const AttentionWorkspace work = attention_workspace(s, table.positions > 0 ? &table : nullptr, 4);
    attention_heads_backward(dqkv.data, dout.data(), qkv.value().data(), weights.defined() ? weights.data() : nullptr,
                             work.cos_pairs, work.sin_pairs, scale, s.B, s.T, s.H, s.d, dqkv.accumulate, work.scratch,
                             work.threads);
  });
}

}  // namespace mg
