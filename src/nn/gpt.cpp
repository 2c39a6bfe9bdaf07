#include "nn/gpt.h"

#include <cmath>
#include <set>

#include "nn/attention.h"

#include "core/error.h"

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
    const float* row = x.data() + r * D;
    double mean = 0.0, var = 0.0;
    for (int64_t j = 0; j < D; ++j) mean += row[j];
    mean /= static_cast<double>(D);
    for (int64_t j = 0; j < D; ++j) var += (row[j] - mean) * (row[j] - mean);
    scale.data()[r] = static_cast<float>(std::sqrt(var / static_cast<double>(D) + eps));
  }
  return scale;
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
  const BlockContext context{layer, config_.n_head, config_.position == PositionType::rope ? &rope_table_ : nullptr, p_drop, rng,
                             o.hooks};
  Var x1 = causal_self_attention(x, h, w, context);  // nn/attention.cpp
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
