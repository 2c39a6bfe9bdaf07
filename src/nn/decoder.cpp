// The decoder's forward (decoder.h): SPEC section 1 for rows of one sequence.
// GELU, the softmax row and the LayerNorm row come from kernels/, so they compute what
// training computes. RoPE is written out here for one row: kernels/ wraps it in an OpenMP
// parallel region, which costs about 0.5 us to enter even when it runs on one thread,
// more than a 32-wide row's work, and a step has 2 n_layer n_head rotations.
#include "nn/decoder.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

#include "kernels/gelu.h"
#include "kernels/layernorm.h"
#include "kernels/softmax_row.h"
#include "tensor/error.h"

namespace mg {
namespace {

// vector_matrix reads rows up to their width rounded up to 8 floats.
constexpr int64_t kReadSlack = 8;

std::vector<float> copy_of(const Gpt& model, const std::string& name) {
  const Tensor& t = model.parameters().get(name).value();
  return std::vector<float>(t.data(), t.data() + t.numel());
}

PackedLinear packed(const Gpt& model, const std::string& weight, const std::string& bias = "") {
  const Tensor& w = model.parameters().get(weight).value();  // [out, in]
  const float* b = bias.empty() ? nullptr : model.parameters().get(bias).value().data();
  return PackedLinear(w.data(), b, w.dim(0), w.dim(1));
}

// Rotates the pairs (v[2i], v[2i+1]) of one head vector [d] by the table's angles at position.
void rope_row(float* v, const RopeTable& table, int64_t position) {
  const int64_t half = table.head_width / 2;
  const float* c = table.cos.data() + position * half;  // [d/2]
  const float* s = table.sin.data() + position * half;
  for (int64_t i = 0; i < half; ++i) {
    const float v0 = v[2 * i], v1 = v[2 * i + 1];
    v[2 * i] = v0 * c[i] - v1 * s[i];
    v[2 * i + 1] = v0 * s[i] + v1 * c[i];
  }
}

}  // namespace

Decoder::Decoder(const Gpt& model)
    : config_(model.config()),
      D_(config_.n_embd),
      H_(config_.n_head),
      d_(config_.head_width()),
      T_(config_.block_size),
      Tp_((config_.block_size + kReadSlack - 1) / kReadSlack * kReadSlack),
      V_(config_.vocab_size),
      F_(config_.mlp_ratio * config_.n_embd) {
  tok_emb_ = copy_of(model, "tok_emb.weight");
  if (config_.position == "learned") pos_emb_ = copy_of(model, "pos_emb.weight");
  if (config_.position == "rope") rope_ = make_rope_table(T_, d_, config_.rope_base);
  for (int64_t l = 0; l < config_.n_layer; ++l) {
    const std::string b = "blocks." + std::to_string(l) + ".";
    Layer layer;
    layer.ln1_weight = copy_of(model, b + "ln1.weight");
    layer.ln1_bias = copy_of(model, b + "ln1.bias");
    layer.ln2_weight = copy_of(model, b + "ln2.weight");
    layer.ln2_bias = copy_of(model, b + "ln2.bias");
    std::vector<float> qkv;  // [3D, D]: rows of Wq, then Wk, then Wv
    for (const char* part : {"q_proj", "k_proj", "v_proj"}) {
      const std::vector<float> w = copy_of(model, b + "attn." + part + ".weight");
      qkv.insert(qkv.end(), w.begin(), w.end());
    }
    layer.qkv = PackedLinear(qkv.data(), nullptr, 3 * D_, D_);
    layer.out_proj = packed(model, b + "attn.out_proj.weight");
    layer.fc = packed(model, b + "mlp.fc.weight", b + "mlp.fc.bias");
    layer.proj = packed(model, b + "mlp.proj.weight", b + "mlp.proj.bias");
    layer.keys_t.assign(H_ * d_ * Tp_, 0.0f);
    layer.values.assign(H_ * T_ * d_ + kReadSlack, 0.0f);
    layers_.push_back(std::move(layer));
  }
  lnf_weight_ = copy_of(model, "ln_f.weight");
  lnf_bias_ = copy_of(model, "ln_f.bias");
  head_ = packed(model, "head.weight");

  x_.assign(T_ * D_, 0.0f);
  h_.assign(T_ * D_, 0.0f);
  qkv_.assign(T_ * 3 * D_, 0.0f);
  heads_.assign(T_ * D_, 0.0f);
  hidden_.assign(T_ * F_, 0.0f);
  query_.assign(d_, 0.0f);
  scores_.assign(T_, 0.0f);
  logits_.assign(V_, 0.0f);
}

std::span<const float> Decoder::append(std::span<const int32_t> ids) {
  const int64_t n = static_cast<int64_t>(ids.size());
  MG_CHECK(n >= 1 && length_ + n <= T_, "decoder: positions past block_size");
  const float eps = static_cast<float>(config_.norm_eps);

  // x = tok_emb[id] (+ pos_emb[position])   [n, D]
  for (int64_t t = 0; t < n; ++t) {
    MG_CHECK(ids[t] >= 0 && ids[t] < V_, "decoder: symbol id outside the vocabulary");
    const float* tok = tok_emb_.data() + ids[t] * D_;
    float* x = x_.data() + t * D_;
    if (pos_emb_.empty()) {
      std::memcpy(x, tok, sizeof(float) * D_);
    } else {
      const float* pos = pos_emb_.data() + (length_ + t) * D_;
      for (int64_t j = 0; j < D_; ++j) x[j] = tok[j] + pos[j];
    }
  }

  for (size_t l = 0; l < layers_.size(); ++l) {
    Layer& layer = layers_[l];
    // Every row's keys and values are needed by later positions, but after the last
    // layer's attention only the last row feeds the logits.
    const int64_t first = (l + 1 == layers_.size()) ? n - 1 : 0, rows = n - first;
    for (int64_t t = 0; t < n; ++t)
      layernorm_row(h_.data() + t * D_, x_.data() + t * D_, layer.ln1_weight.data(), layer.ln1_bias.data(), D_, eps);
    layer.qkv.forward(qkv_.data(), 3 * D_, h_.data(), D_, n, false);  // [n, 3D]
    attention(layer, first, n);                                      // heads_ rows first..n-1
    float* x = x_.data() + first * D_;
    layer.out_proj.forward(x, D_, heads_.data() + first * D_, D_, rows, true);  // x += heads Wo^T

    float* h = h_.data() + first * D_;
    float* hidden = hidden_.data() + first * F_;
    for (int64_t t = 0; t < rows; ++t)
      layernorm_row(h + t * D_, x + t * D_, layer.ln2_weight.data(), layer.ln2_bias.data(), D_, eps);
    layer.fc.forward(hidden, F_, h, D_, rows, false);  // [rows, F] = h W1^T + b1
    gelu_forward(hidden, hidden, rows * F_);
    layer.proj.forward(x, D_, hidden, F_, rows, true);  // x += GELU(.) W2^T + b2
  }
  length_ += n;

  const float* last = x_.data() + (n - 1) * D_;
  layernorm_row(h_.data(), last, lnf_weight_.data(), lnf_bias_.data(), D_, eps);
  head_.forward(logits_.data(), V_, h_.data(), D_, 1, false);  // [V] = ln_f(x) head^T
  return logits_;
}

void Decoder::attention(Layer& layer, int64_t first, int64_t rows) {
  // Keys and values of every new row join the cache first: row t attends to rows <= t.
  for (int64_t t = 0; t < rows; ++t) {
    const int64_t position = length_ + t;
    const float* row = qkv_.data() + t * 3 * D_;  // [q | k | v], each [H, d]
    for (int64_t hd = 0; hd < H_; ++hd) {
      float* key = query_.data();  // [d] scratch: the key, rotated, before it is scattered
      std::memcpy(key, row + D_ + hd * d_, sizeof(float) * d_);
      if (!rope_.cos.empty()) rope_row(key, rope_, position);
      float* keys_t = layer.keys_t.data() + hd * d_ * Tp_;  // [d, Tp]
      for (int64_t j = 0; j < d_; ++j) keys_t[j * Tp_ + position] = key[j];
      std::memcpy(layer.values.data() + (hd * T_ + position) * d_, row + 2 * D_ + hd * d_, sizeof(float) * d_);
    }
  }
  // Scale by the head width d, the length of each head's dot product (as Gpt::block does).
  const float scale = 1.0f / std::sqrt(static_cast<float>(d_));
  for (int64_t t = first; t < rows; ++t) {
    const int64_t position = length_ + t, keys = position + 1;  // causal: keys 0..position
    for (int64_t hd = 0; hd < H_; ++hd) {
      float* q = query_.data();  // [d]
      std::memcpy(q, qkv_.data() + t * 3 * D_ + hd * d_, sizeof(float) * d_);
      if (!rope_.cos.empty()) rope_row(q, rope_, position);
      float* s = scores_.data();  // [keys]
      vector_matrix(s, q, layer.keys_t.data() + hd * d_ * Tp_, Tp_, d_, keys);  // q K^T
      for (int64_t k = 0; k < keys; ++k) s[k] *= scale;
      softmax_row(s, s, keys);  // projected_weights of this query
      // merge_heads: head hd owns features hd*d .. hd*d+d-1 of the row.
      vector_matrix(heads_.data() + t * D_ + hd * d_, s, layer.values.data() + hd * T_ * d_, d_, keys, d_);  // w V
    }
  }
}

}  // namespace mg
