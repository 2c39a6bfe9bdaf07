// The model of nn/gpt.h in one file, read top to bottom: the parameters and their
// initialisation, one block's attention step by step (causal_self_attention), the block
// (attention then MLP, each pre-norm with a residual), the forward and the loss.
#include "nn/gpt.h"

#include <cmath>
#include <set>
#include <string>

#include "core/error.h"
#include "nn/reference.h"

namespace mg {

Gpt::Gpt(const ModelConfig& config) : config_(config) {
  validate_model_shape(config_);
  for (const auto& [name, shape] : expected_parameter_shapes(config_)) params_.add(name, shape);
  weights_ = model_weights(params_, config_);
  if (config_.position == PositionType::rope)
    rope_table_ = make_rope_table(config_.block_size, config_.head_width(), config_.rope_base);
}

void Gpt::initialize(Rng& rng) {
  const double std_weight = 0.02;
  const double std_residual = 0.02 / std::sqrt(2.0 * static_cast<double>(config_.n_layer));
  // LayerNorm gains start at 1; the residual projections (out_proj, mlp.proj) are scaled
  // down so that the sum of 2 * n_layer residual branches keeps the stream's variance near
  // that of one.
  std::set<const Tensor*> gains = {&weights_.ln_f_weight.value()}, residual;
  for (const BlockWeights& b : weights_.blocks) {
    gains.insert({&b.ln1_weight.value(), &b.ln2_weight.value()});
    residual.insert({&b.out_proj.value(), &b.proj_weight.value()});
  }
  for (auto& parameter : params_.all()) {  // in registration order: the draws' order
    Tensor& t = parameter.var.value();
    if (gains.contains(&t)) {
      t.fill(1.0f);
    } else if (t.rank() == 1) {
      t.fill(0.0f);  // biases
    } else {
      const double stddev = residual.contains(&t) ? std_residual : std_weight;
      for (float& w : t.span()) w = static_cast<float>(rng.normal() * stddev);
    }
  }
}

namespace {

// ln_f's scale sqrt(var + eps) of each row of the final stream x [B,T,D] -> [B,T,1], in
// double as docs/model.md section 2.2 states it: the divisor direct logit attribution
// freezes (TransformerLens's ln_final.hook_scale).
Tensor layer_norm_scale(const Tensor& x, double eps) {
  const int64_t D = x.dim(2), rows = x.numel() / D;
  Tensor scale = Tensor::empty({x.dim(0), x.dim(1), 1});
  for (int64_t r = 0; r < rows; ++r) {
    scale.data()[r] = static_cast<float>(layer_norm_moments(x.data() + r * D, D, eps).sigma);
  }
  return scale;
}

// What one block's attention needs besides its inputs and weights.
struct BlockContext {
  int64_t layer = 0;                // names the hook points blocks.<layer>.attn.*
  int64_t n_head = 1;               // H
  const RopeTable* rope = nullptr;  // null for learned positions
  float p_drop = 0.0f;              // dropout on the weights and the branch (training only)
  Rng& rng;                         // dropout's draws
  ForwardHooks* hooks = nullptr;    // null: nothing recorded, the fused kernel runs
};

// ---- Attention ---------------------------------------------------------------------------
// The attention sub-layer of one block, step by step: x + attention(h) with h = ln1(x), x
// and h [B,T,D] -> [B,T,D], with the block's q_proj, k_proj, v_proj and out_proj. Project,
// split heads, RoPE, scores, 1/sqrt(d), mask, softmax, weighted sum, merge heads, out
// projection, op by op (autograd/ops_attention.cpp); then the same steps as training runs
// them, fused in one op (kernels/fused_attention.h), which the tests hold against the
// composed form. Records and edits blocks.<layer>.attn.hook_pattern, attn.hook_z and
// hook_attn_out as context.hooks asks. Generation's attention over its KV cache is
// Decoder::attend (nn/decoder.cpp).
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

}  // namespace

Var Gpt::block(int64_t layer, const Var& x, const ForwardOptions& o) const {
  const BlockWeights& w = weights_.blocks[static_cast<size_t>(layer)];
  const float eps = static_cast<float>(config_.norm_eps);
  const float p_drop = o.training ? static_cast<float>(config_.dropout) : 0.0f;
  Rng unused;
  Rng& rng = o.dropout_rng ? *o.dropout_rng : unused;
  MG_CHECK(p_drop == 0.0f || o.dropout_rng, "dropout needs a random generator");

  Var h = layer_norm(x, w.ln1_weight, w.ln1_bias, eps);  // [B,T,D]
  const RopeTable* rope = config_.position == PositionType::rope ? &rope_table_ : nullptr;
  const BlockContext context{layer, config_.n_head, rope, p_drop, rng, o.hooks};
  Var x1 = causal_self_attention(x, h, w, context);  // above
  if (o.hooks) o.hooks->at(hook::resid_mid(layer), x1.value());

  // The MLP onto the residual: x1 + GELU(h2 W1^T + b1) W2^T + b2, hidden width mlp_ratio*D.
  // With dropout on the branch, or when a reader wants the branch itself, it is composed
  // op by op; else mlp_residual fuses it.
  Var h2 = layer_norm(x1, w.ln2_weight, w.ln2_bias, eps);  // [B,T,D]
  if (p_drop > 0.0f || (o.hooks && o.hooks->wants(hook::mlp_out(layer)))) {
    Var hidden = gelu(linear(h2, w.fc_weight, w.fc_bias));  // [B,T,mlp_ratio*D]
    Var mlp = dropout(linear(hidden, w.proj_weight, w.proj_bias), p_drop, rng);  // [B,T,D]
    if (o.hooks) o.hooks->at(hook::mlp_out(layer), mlp.value());
    return add(x1, mlp);
  }
  return mlp_residual(x1, h2, w.fc_weight, w.fc_bias, w.proj_weight, w.proj_bias);
}

Var Gpt::forward(std::span<const int32_t> ids, int64_t B, int64_t T, const ForwardOptions& o) const {
  MG_CHECK(static_cast<int64_t>(ids.size()) == B * T, "forward: ids do not fill [B,T]");
  MG_CHECK(T >= 1 && T <= config_.block_size, "forward: positions past block_size");
  Var x = embedding(weights_.tok_emb, ids, {B, T});  // [B,T,D]
  if (o.hooks) o.hooks->at(hook::embed, x.value());
  if (config_.position == PositionType::learned) {
    std::vector<int32_t> positions(static_cast<size_t>(T));
    for (int64_t t = 0; t < T; ++t) positions[t] = static_cast<int32_t>(t);
    Var pos = embedding(weights_.pos_emb, positions, {T});  // [T,D] broadcast over B
    if (o.hooks) o.hooks->at(hook::pos_embed, pos.value());
    x = add(x, pos);
  }
  for (int64_t layer = 0; layer < config_.n_layer; ++layer) {
    if (o.hooks) o.hooks->at(hook::resid_pre(layer), x.value());
    x = block(layer, x, o);
    if (o.hooks) o.hooks->at(hook::resid_post(layer), x.value());
  }
  if (o.hooks && o.hooks->wants(hook::ln_final_scale)) {
    // ln_f computes its own scale; an edit of this copy would change nothing: reading only.
    MG_CHECK(!o.hooks->edited(hook::ln_final_scale), "ln_final.hook_scale is recorded, not edited");
    Tensor scale = layer_norm_scale(x.value(), config_.norm_eps);
    o.hooks->at(hook::ln_final_scale, scale);
  }
  x = layer_norm(x, weights_.ln_f_weight, weights_.ln_f_bias, static_cast<float>(config_.norm_eps));
  if (o.hooks) o.hooks->check_edits_reached();
  return linear(x, weights_.head);  // [B,T,V]
}

Var Gpt::loss(std::span<const int32_t> ids, std::span<const int32_t> targets, int64_t B, int64_t T,
              const ForwardOptions& o) const {
  return cross_entropy(forward(ids, B, T, o), targets);
}

}  // namespace mg
