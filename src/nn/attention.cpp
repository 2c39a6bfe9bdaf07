// Attention, step by step: project, split heads, RoPE, scores, 1/sqrt(d), mask, softmax,
// weighted sum, merge heads, out projection, op by op (autograd/ops_attention.cpp); then the
// same steps as training runs them, fused in one op (kernels/attention.h), which the tests
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

namespace mg {
namespace {

// Replaces head outputs as options.ablations asks (inference only). heads [B,H,T,d].
void ablate_heads(Tensor& heads, int64_t layer, const ForwardOptions& options) {
  const int64_t B = heads.dim(0), H = heads.dim(1), T = heads.dim(2), d = heads.dim(3);
  for (const HeadAblation& ablation : options.ablations) {
    if (ablation.layer != layer) continue;
    MG_CHECK(!grad_enabled(), "head ablation is for inference only");
    MG_CHECK(ablation.head >= 0 && ablation.head < H, "head ablation: head out of range");
    MG_CHECK(ablation.value.empty() || static_cast<int64_t>(ablation.value.size()) == d, "head ablation: value is not [d]");
    for (int64_t b = 0; b < B; ++b)
      for (int64_t t = 0; t < T; ++t) {
        float* row = heads.data() + ((b * H + ablation.head) * T + t) * d;  // [d] of [B,H,T,d]
        if (ablation.value.empty()) std::memset(row, 0, sizeof(float) * d);
        else std::memcpy(row, ablation.value.data(), sizeof(float) * d);
      }
  }
}

}  // namespace

Var causal_self_attention(const Var& x, const Var& h, const Parameters& params, int64_t layer, int64_t n_head,
                          const RopeTable* rope, float p_drop, Rng& rng, const ForwardOptions& options) {
  const std::string attn = "blocks." + std::to_string(layer) + ".attn.";
  const int64_t H = n_head, d = h.dim(2) / H;

  // 1. Project:                                                          h [B,T,D] -> [B,T,3D]
  //      q, k, v = h Wq^T, h Wk^T, h Wv^T, as one GEMM of width 3D (qkv_projection): each row
  //      holds the position's q, k and v side by side.
  Var qkv = qkv_projection(h, params.get(attn + "q_proj.weight"), params.get(attn + "k_proj.weight"),
                           params.get(attn + "v_proj.weight"));
  const float scale = 1.0f / std::sqrt(static_cast<float>(d));  // the head width d: each dot product's length
  const Var& wo = params.get(attn + "out_proj.weight");

  // Steps 2 to 5, op by op: with dropout on the weights or the branch, or when the heads'
  // outputs are wanted one by one (inspection, ablation).
  if (p_drop > 0.0f || options.head_outputs || !options.ablations.empty()) {
    // 2. Split heads, RoPE:                                         [B,T,3D] -> [3,B,H,T,d]
    //      q = rope(split_heads(q)), k = rope(split_heads(k)), v = split_heads(v), positions from 0
    Var heads_qkv = split_qkv_heads(qkv, H, rope, 0);
    Var q = select(heads_qkv, 0), k = select(heads_qkv, 1), v = select(heads_qkv, 2);  // [B,H,T,d] each, views

    // 3. Scores, scale, mask, softmax:                          q, k [B,H,T,d] -> w [B,H,T,T]
    //      w = causal_softmax(q k^T / sqrt(d)), key s visible to query t when s <= t. Fused as
    //      causal_attention_weights: the scale is the batched GEMM's alpha, the softmax runs in
    //      place, and only w is kept for the backward.
    Var w = causal_attention_weights(q, k, scale);
    if (options.projected_weights) options.projected_weights->push_back(w.value());

    // 4. Weighted sum of the values:                  w [B,H,T,T] @ v [B,H,T,d] -> [B,H,T,d]
    Var heads = matmul(dropout(w, p_drop, rng), v);
    if (options.head_outputs) options.head_outputs->push_back(heads.value().clone());
    ablate_heads(heads.value(), layer, options);

    // 5. Merge heads:                                              [B,H,T,d] -> [B,T,H,d] = [B,T,D]
    Var merged = merge_heads(heads);

    // 6. Out projection onto the residual stream: x + merged Wo^T                     [B,T,D]
    return p_drop > 0.0f ? add(x, dropout(linear(merged, wo), p_drop, rng)) : linear_residual(x, merged, wo);
  }

  // Steps 2 to 5 fused (kernels/attention.h): causal_attention reads each head's q, k, v from
  // the rows, rotates q and k, computes w and w v in the thread's cache, skipping the blocks
  // the mask zeroes, and writes the heads merged, [B,T,3D] -> [B,T,D]; its backward writes
  // dq, dk, dv back into the rows. No split or merged copy of the heads is ever made.
  Tensor w;
  Var merged = causal_attention(qkv, H, rope, scale, options.projected_weights ? &w : nullptr);
  if (options.projected_weights) options.projected_weights->push_back(w);

  // 6. Out projection onto the residual stream, the product and the sum in one GEMM.
  return linear_residual(x, merged, wo);
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
