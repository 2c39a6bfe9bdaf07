// Attention, step by step: project, split heads, RoPE, scores, 1/sqrt(d), mask, softmax,
// weighted sum, merge heads, out projection, op by op (autograd/ops_attention.cpp); then the
// same steps as training runs them, fused in one op (kernels/fused_attention.h), which the tests
// hold against the composed form. Below it, the same attention as generation's Decoder runs it:
// one position (or a few) at a time against its KV cache, on the kernels directly.
#include "nn/attention.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

#include "core/error.h"
#include "kernels/softmax.h"
#include "nn/decoder.h"
#include "nn/gpt.h"
#include "nn/hooks.h"

namespace mg {
Var causal_self_attention(const Var& x, const Var& h, const BlockWeights& weights, const BlockContext& context) {
  const int64_t layer = context.layer, H = context.n_head, d = h.dim(2) / H;
  const RopeTable* rope = context.rope;
  const float p_drop = context.p_drop;
  Rng& rng = context.rng;

  // 1. Project:                                                          h [B,T,D] -> [B,T,3D]
  //      q, k, v = h Wq^T, h Wk^T, h Wv^T, as one GEMM of width 3D (qkv_projection): each row
  //      holds the position's q, k and v side by side.
  Var qkv = qkv_projection(h, weights.q_proj, weights.k_proj, weights.v_proj);
  const float scale = 1.0f / std::sqrt(static_cast<float>(d));  // the head width d: each dot product's length
  const Var& wo = weights.out_proj;

  // The points a reader may ask for (nn/hooks.h); none without hooks.
  ForwardHooks* hooks = context.hooks;
  const std::string pattern_point = hooks ? hook::pattern(layer) : std::string();
  const std::string z_point = hooks ? hook::z(layer) : std::string();
  const std::string out_point = hooks ? hook::attn_out(layer) : std::string();
  const bool attn_out_wanted = hooks && hooks->wants(out_point);

  // 6. Out projection onto the residual stream: x + merged Wo^T, the product and the sum
  //    in one GEMM, unless a reader wants the branch merged Wo^T [B,T,D] on its own.
  auto out_projection = [&](const Var& merged) {
    if (p_drop > 0.0f) return add(x, dropout(linear(merged, wo), p_drop, rng));
    if (!attn_out_wanted) return linear_residual(x, merged, wo);
    Var branch = linear(merged, wo);
    hooks->at(out_point, branch.value());
    return add(x, branch);
  };

  // Steps 2 to 5, op by op: with dropout on the weights or the branch, or when a reader
  // wants the heads' outputs one by one (inspection, ablation, patching) or edits the weights.
  if (p_drop > 0.0f || (hooks && (hooks->wants(z_point) || hooks->edited(pattern_point)))) {
    // 2. Split heads, RoPE:                                         [B,T,3D] -> [3,B,H,T,d]
    //      q = rope(split_heads(q)), k = rope(split_heads(k)), v = split_heads(v), positions from 0
    Var heads_qkv = split_qkv_heads(qkv, H, rope, 0);
    Var q = select(heads_qkv, 0), k = select(heads_qkv, 1), v = select(heads_qkv, 2);  // [B,H,T,d] each, views

    // 3. Scores, scale, mask, softmax:                          q, k [B,H,T,d] -> w [B,H,T,T]
    //      w = causal_softmax(q k^T / sqrt(d)), key s visible to query t when s <= t. Fused as
    //      causal_attention_weights: the scale is the batched GEMM's alpha, the softmax runs in
    //      place, and only w is kept for the backward.
    Var w = causal_attention_weights(q, k, scale);
    if (hooks) hooks->at(pattern_point, w.value());

    // 4. Weighted sum of the values:                  w [B,H,T,T] @ v [B,H,T,d] -> [B,H,T,d]
    Var heads = matmul(dropout(w, p_drop, rng), v);
    if (hooks) hooks->at(z_point, heads.value());

    // 5. Merge heads:                                              [B,H,T,d] -> [B,T,H,d] = [B,T,D]
    return out_projection(merge_heads(heads));
  }

  // Steps 2 to 5 fused (kernels/fused_attention.h): causal_attention reads each head's q, k, v from
  // the rows, rotates q and k, computes w and w v in the thread's cache, skipping the blocks
  // the mask zeroes, and writes the heads merged, [B,T,3D] -> [B,T,D]; its backward writes
  // dq, dk, dv back into the rows. No split or merged copy of the heads is ever made.
  const bool pattern_wanted = hooks && hooks->wants(pattern_point);
  Tensor w;
  Var merged = causal_attention(qkv, H, rope, scale, pattern_wanted ? &w : nullptr);
  if (pattern_wanted) hooks->at(pattern_point, w);  // recorded only: an edit takes the path above
  return out_projection(merged);
}

// ---- Generation: the Decoder's attention over its KV cache ------------------------------

void Decoder::attend(Layer& layer, int64_t first, int64_t hi, int worker, int team) {
  // Per head, these rows in blocks of kQueryBlock: S = Q K^T over the keys the block's last
  // row sees [rows, keys], the causal softmax (masked weights exact zeros), then W V. A
  // masked weight adds 0 * v, so each row's sums are those over its visible keys alone,
  // and the keys past a block's last row (all masked for it) are never computed.
  constexpr int64_t kQueryBlock = 16;
  // Scale by the head width d, the length of each head's dot product (as causal_self_attention above does).
  const float scale = 1.0f / std::sqrt(static_cast<float>(d_));
  float* scores = scores_.data() + worker * T_ * Tp_;  // this worker's [rows, keys]
  int64_t piece = 0;
  for (int64_t r0 = first; r0 < hi; r0 += kQueryBlock) {
    const int64_t rows = std::min(kQueryBlock, hi - r0), keys = length_ + r0 + rows;
    for (int64_t hd = 0; hd < H_; ++hd) {
      if (piece++ % team != worker) continue;
      const float* q = qkv_.data() + r0 * 3 * D_ + hd * d_;  // [rows, d], rows 3D apart
      matrix_product(scores, keys, q, 3 * D_, rows, layer.keys_t.data() + hd * d_ * Tp_, Tp_, d_, keys);
      for (int64_t i = 0; i < rows * keys; ++i) scores[i] *= scale;
      causal_softmax_forward(scores, scores, 1, rows, keys);  // row t sees keys 0..keys-rows+t
      // merge_heads: head hd owns features hd*d .. hd*d+d-1 of each row.
      matrix_product(heads_.data() + r0 * D_ + hd * d_, D_, scores, keys, rows, layer.values.data() + hd * T_ * d_,
                     d_, keys, d_);
    }
  }
}

}  // namespace mg
