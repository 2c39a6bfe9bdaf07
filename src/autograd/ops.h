// The differentiable ops of docs/model.md, "The forward pass". Each is one function whose forward
// calls a kernel and whose backward, recorded beside it in the .cpp, writes the inputs' gradients.
// Shapes use docs/model.md's letters: B batch, T positions, D width, H heads, d = D/H head width, V
// vocabulary.
//
// The gradient rule, the one way a backward writes: for each input x that requires a
// gradient, GradOut g = x.grad_out() gives x's buffer and g.accumulate, whether an earlier
// backward (another consumer of x) already wrote into it. The kernel then adds into it
// (accumulate) or overwrites it (no zero fill spent); kernels take that flag as their
// `accumulate` argument. A backward that can only add (a scatter, a part of x) takes
// g.for_adding(). Inputs that need no gradient are skipped. Backwards
// capture input handles by value ([x]): a Var is a handle, and grad_out() is const.
//
// The derivatives (dout is the gradient of the output; ^T transposes the last two axes):
//   matmul(a, b)             out = a b              da = dout b^T        db = a^T dout
//   linear(x, W, b)          out = x W^T + b        dx = dout W          dW = dout^T x    db = sum_rows dout
//   linear_residual(r,x,W,b) out = r + x W^T + b    dr = dout, then as linear
//   mlp_residual(r,x,W1,b1,W2,b2)  p = x W1^T + b1, out = r + gelu(p) W2^T + b2
//                            dr = dout, dW2 = dout^T gelu(p), db2 = sum_rows dout,
//                            dp = (dout W2) gelu'(p), then dx, dW1, db1 as linear with dp
//   add(a, b)                out = a + b            da = dout            db = dout (summed over broadcast rows)
//   scale(x, f)              out = f x              dx = f dout
//   embedding(E, ids)        out[i] = E[ids[i]]     dE[ids[i]] += dout[i]
//   layer_norm(x, w, b)      y = (x - mean) rstd, out = y w + b
//                            dx = rstd (g - mean(g) - y mean(g y)) with g = dout w
//                            dw = sum_rows dout y   db = sum_rows dout
//   gelu(x)                  out = x Phi(x)         dx = dout (Phi(x) + x phi(x))
//   dropout(x)               out = x m              dx = dout m     (m: 0 or 1/(1-p), drawn once)
//   split_heads, merge_heads, select: re-layouts    dx = dout moved back where x came from
//   rope(x)                  out = R(angle) x       dx = R(-angle) dout  (R orthogonal)
//   qkv_projection(x, Wq,Wk,Wv)  y = x [Wq;Wk;Wv]^T   dx = dy [Wq;Wk;Wv]   d[Wq;Wk;Wv] = dy^T x
//   split_qkv_heads(y)       heads of y, q and k rotated
//                            dy = rows of (R(-angle) dq, R(-angle) dk, dv)
//   causal_softmax(s)        w = softmax(s) over visible keys      ds = w (dw - <w, dw>)
//   causal_attention_weights(q, k, c)  w = causal_softmax(c q k^T)
//                            ds = c w (dw - <w, dw>)  dq = ds k    dk = ds^T q
//   causal_attention(y, c)   q, k, v = split_qkv_heads(y), w = causal_attention_weights(q, k, c),
//                            out = merge_heads(w v); with do = split_heads(dout):
//                            dw = do v^T, ds = c w (dw - <w, dw>)
//                            dq = ds k    dk = ds^T q    dv = w^T do, dy = rows of them as above
//                            (w made again from q and k, not kept from the forward)
//   cross_entropy(z, t)      L = mean_rows -log softmax(z)[t]      dz = dL (softmax(z) - onehot(t)) / rows
#pragma once

#include <cstdint>
#include <span>

#include "autograd/var.h"
#include "kernels/rope.h"
#include "core/random.h"

namespace mg {

// a [...,M,K] @ b [...,K,N] -> [...,M,N] (b^T when transpose_b: b is [...,N,K]).
// Leading axes of a and b are equal (batched), or b is 2-D and shared by every batch.
Var matmul(const Var& a, const Var& b, bool transpose_b = false);

// x [...,in] @ weight^T + bias: weight [out,in] as PyTorch stores it, bias [out] or undefined
// (added in the GEMM's epilogue).
Var linear(const Var& x, const Var& weight, const Var& bias = Var());

// residual + x @ weight^T + bias in one op: a linear layer whose output joins the residual
// stream (attention's out projection, the MLP's second layer). The residual and the bias
// are the GEMM's epilogue, so the layer's own output is never stored.
Var linear_residual(const Var& residual, const Var& x, const Var& weight, const Var& bias = Var());

// The MLP on the residual stream in one op: residual + GELU(x fc_weight^T + fc_bias)
// proj_weight^T + proj_bias, as linear -> gelu -> linear_residual compute it. The forward
// keeps GELU's slope in place of its input, and the backward applies it as the multiplier
// of the GEMM that makes the hidden layer's gradient, so GELU's backward costs no pass.
Var mlp_residual(const Var& residual, const Var& x, const Var& fc_weight, const Var& fc_bias,
                 const Var& proj_weight, const Var& proj_bias);

// a + b with b either a's shape or a's trailing axes (a bias broadcast over leading ones).
Var add(const Var& a, const Var& b);

// x * factor.
Var scale(const Var& x, float factor);

// table [V,D], ids (each < V) laid out as ids_shape -> [...ids_shape, D]; backward scatter-adds.
Var embedding(const Var& table, std::span<const int32_t> ids, const Shape& ids_shape);

// Over the last axis: (x - mean) / sqrt(var + eps) * weight + bias, biased variance.
Var layer_norm(const Var& x, const Var& weight, const Var& bias, float eps);

// Exact GELU: x * Phi(x) = 0.5 x (1 + erf(x / sqrt 2)).
Var gelu(const Var& x);

// [B,T,D] -> [B,H,T,d]: feature j of position t goes to head j / d, coordinate j % d.
// D % H != 0 is a ShapeError naming both numbers.
Var split_heads(const Var& x, int64_t n_head);
// [B,H,T,d] -> [B,T,D], the exact inverse of split_heads.
Var merge_heads(const Var& x);

// The attention's three projections in one op: x [B,T,D] @ [Wq;Wk;Wv]^T as one GEMM of
// width 3D: out [B,T,3D] holds x Wq^T, x Wk^T, x Wv^T side by side in each row. The weights
// stay three [D,D] parameters (their checkpoint names); they are packed per call.
Var qkv_projection(const Var& x, const Var& wq, const Var& wk, const Var& wv);

// qkv [B,T,3D] (qkv_projection's rows) split into heads, q and k RoPE-rotated (with a table)
// at positions offset .. offset+T-1, in one pass:
//   out [3,B,H,T,d] = (rope(split_heads(q)), rope(split_heads(k)), split_heads(v)).
// Take q, k and v out with select(out, 0/1/2).
Var split_qkv_heads(const Var& qkv, int64_t n_head, const RopeTable* rope_table = nullptr,
                    int64_t position_offset = 0);

// x[index] along the leading axis: [N,...] -> [...], a view sharing x's storage (no copy).
Var select(const Var& x, int64_t index);

// x [B,H,T,d]: rotates the pair (x[2i], x[2i+1]) of position p by angle (p + offset) * base^(-2i/d),
// angles from table (which must cover offset + T positions).
Var rope(const Var& x, const RopeTable& table, int64_t position_offset = 0);

// scores [...,Tq,Tk] -> softmax over the last axis with keys after the query masked out:
// query row i sits at absolute position (Tk - Tq + i), so key s is visible when s <= Tk - Tq + i.
// Masked weights are exactly 0. This is the `projected_weights` of inspect-heads.
Var causal_softmax(const Var& scores);

// Fused attention weights: causal_softmax(q @ k^T * scale) for q [...,Tq,d], k [...,Tk,d]
// (leading axes equal) -> [...,Tq,Tk]. One GEMM with the scale as its alpha, the softmax in
// place, and only the weights kept for the backward: no scores tensor, no scale pass.
Var causal_attention_weights(const Var& q, const Var& k, float scale);

// Causal self-attention from qkv_projection's rows to the heads merged back, in one op
// (kernels/fused_attention.h): with q, k, v the n_head heads of qkv [B,T,3D],
//   w = causal_softmax(rope(q) rope(k)^T * scale)   [B,H,T,T], the projected_weights
//   out = merge_heads(w v)                          [B,T,D]
// as split_qkv_heads, select, causal_attention_weights, matmul and merge_heads compute it.
// w is written to *weights_out when asked; otherwise it is kept nowhere, and the backward
// makes it again from q and k, bit for bit. Positions start at 0.
Var causal_attention(const Var& qkv, int64_t n_head, const RopeTable* rope_table, float scale,
                     Tensor* weights_out = nullptr);

// Mean over rows of -log softmax(logits)[target]: logits [...,V], targets one per row.
// A scalar [1]. Fused log-softmax: max-subtracted, stable for |logits| ~ 1e4.
Var cross_entropy(const Var& logits, std::span<const int32_t> targets);

// Inverted dropout: each element zeroed with probability p, survivors scaled by 1/(1-p).
// Identity (and no random draws) when p == 0.
Var dropout(const Var& x, float p, Rng& rng);

}  // namespace mg
