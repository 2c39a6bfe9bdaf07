// The decoder's forward (decoder.h): docs/model.md's forward for rows of one sequence, as calls
// to the kernels training uses (GELU, the LayerNorm row, RoPE, the softmax row), so it
// computes what training computes; only the order of the work is its own.
#include "nn/decoder.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

#include "kernels/gelu.h"
#include "kernels/layernorm.h"
#include "kernels/parallel.h"
#include "kernels/rope.h"
#include "kernels/runtime.h"
#include "kernels/softmax.h"
#include "core/error.h"

namespace mg {
namespace {

// matrix_product reads rows up to their width rounded up to 8 floats.
constexpr int64_t kReadSlack = 8;
// Vocabularies up to this size get layer 0's per-symbol table ([V, 3D] floats).
constexpr int64_t kSymbolTableLimit = 4096;
// An append of at least this many rows is split over the threads, up to kMaxWorkers.
constexpr int64_t kParallelRows = 16;
constexpr int kMaxWorkers = 8;

std::vector<float> copy_of(const Var& weight) {
  const Tensor& t = weight.value();
  return std::vector<float>(t.data(), t.data() + t.numel());
}

// weight [out, in], bias [out] or none.
PackedLinear packed(const Var& weight, const Var* bias = nullptr) {
  const Tensor& w = weight.value();
  return PackedLinear(w.data(), bias ? bias->value().data() : nullptr, w.dim(0), w.dim(1));
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
  const ModelWeights& weights = model.weights();
  tok_emb_ = copy_of(weights.tok_emb);
  if (config_.position == PositionType::learned) pos_emb_ = copy_of(weights.pos_emb);
  if (config_.position == PositionType::rope) rope_ = make_rope_table(T_, d_, config_.rope_base);
  for (int64_t l = 0; l < config_.n_layer; ++l) {
    const BlockWeights& b = weights.blocks[static_cast<size_t>(l)];
    Layer layer;
    layer.ln1_weight = copy_of(b.ln1_weight);
    layer.ln1_bias = copy_of(b.ln1_bias);
    layer.ln2_weight = copy_of(b.ln2_weight);
    layer.ln2_bias = copy_of(b.ln2_bias);
    std::vector<float> qkv;  // [3D, D]: rows of Wq, then Wk, then Wv
    for (const Var* part : {&b.q_proj, &b.k_proj, &b.v_proj}) {
      const std::vector<float> w = copy_of(*part);
      qkv.insert(qkv.end(), w.begin(), w.end());
    }
    layer.qkv = PackedLinear(qkv.data(), nullptr, 3 * D_, D_);
    layer.out_proj = packed(b.out_proj);
    layer.fc = packed(b.fc_weight, &b.fc_bias);
    layer.proj = packed(b.proj_weight, &b.proj_bias);
    layer.keys_t.assign(H_ * d_ * Tp_, 0.0f);
    layer.values.assign(H_ * T_ * d_ + kReadSlack, 0.0f);
    layers_.push_back(std::move(layer));
  }
  // Layer 0 of a RoPE model reads only the symbol (no position joins the embedding), so
  // its q, k and v before RoPE are one row per symbol id, computed here with the same
  // kernels (the same bits) instead of at every position.
  if (!rope_.cos.empty() && V_ <= kSymbolTableLimit) {
    std::vector<float> normed(V_ * D_);  // [V, D] = LN1(tok_emb)
    const Layer& first = layers_.front();
    for (int64_t v = 0; v < V_; ++v)
      layernorm_row(normed.data() + v * D_, tok_emb_.data() + v * D_, first.ln1_weight.data(), first.ln1_bias.data(),
                    D_, static_cast<float>(config_.norm_eps));
    symbol_qkv_.assign(V_ * 3 * D_, 0.0f);
    first.qkv.forward(symbol_qkv_.data(), 3 * D_, normed.data(), D_, V_, false);
  }
  lnf_weight_ = copy_of(weights.ln_f_weight);
  lnf_bias_ = copy_of(weights.ln_f_bias);
  head_ = packed(weights.head);

  x_.assign(T_ * D_, 0.0f);
  h_.assign(T_ * D_, 0.0f);
  qkv_.assign(T_ * 3 * D_, 0.0f);
  heads_.assign(T_ * D_, 0.0f);
  hidden_.assign(T_ * F_, 0.0f);
  max_workers_ = std::clamp(num_threads(), 1, kMaxWorkers);
  scores_.assign(max_workers_ * T_ * Tp_, 0.0f);
  logits_.assign(V_, 0.0f);
}

std::span<const float> Decoder::append(std::span<const int32_t> ids) {
  const int64_t n = static_cast<int64_t>(ids.size());
  MG_CHECK(n >= 1 && length_ + n <= T_, "decoder: positions past block_size");
  for (int32_t id : ids) MG_CHECK(id >= 0 && id < V_, "decoder: symbol id outside the vocabulary");

  forward_rows(ids);
  length_ += n;

  const float eps = static_cast<float>(config_.norm_eps);
  const float* last = x_.data() + (n - 1) * D_;
  layernorm_row(h_.data(), last, lnf_weight_.data(), lnf_bias_.data(), D_, eps);
  head_.forward(logits_.data(), V_, h_.data(), D_, 1, false);  // [V] = ln_f(x) head^T
  return logits_;
}

void Decoder::forward_rows(std::span<const int32_t> ids) {
  const int64_t n = static_cast<int64_t>(ids.size());
  const float eps = static_cast<float>(config_.norm_eps);
  const int workers = n >= kParallelRows ? std::min(num_threads(), max_workers_) : 1;
  run_workers(workers, [&](int worker, int team) {
    const int64_t lo = n * worker / team, hi = n * (worker + 1) / team;  // this worker's rows
    // x = tok_emb[id] (+ pos_emb[position])   [n, D]
    for (int64_t t = lo; t < hi; ++t) {
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
      if (l == 0 && !symbol_qkv_.empty()) {
        for (int64_t t = lo; t < hi; ++t)
          std::memcpy(qkv_.data() + t * 3 * D_, symbol_qkv_.data() + ids[t] * 3 * D_, sizeof(float) * 3 * D_);
      } else {
        for (int64_t t = lo; t < hi; ++t)
          layernorm_row(h_.data() + t * D_, x_.data() + t * D_, layer.ln1_weight.data(), layer.ln1_bias.data(), D_,
                        eps);
        layer.qkv.forward(qkv_.data() + lo * 3 * D_, 3 * D_, h_.data() + lo * D_, D_, hi - lo, false);  // [rows, 3D]
      }
      cache_keys_values(layer, lo, hi);
      workers_barrier();  // every row's keys and values are cached
      // Every row's keys and values are needed by later positions, but after the last
      // layer's attention only the last row feeds the logits.
      const bool last = l + 1 == layers_.size();
      attend(layer, last ? n - 1 : 0, n, worker, team);  // heads_ rows
      workers_barrier();  // every row's heads are merged
      const int64_t first = last ? n - 1 : lo, end = last ? (worker == 0 ? n : n - 1) : hi, rows = end - first;
      if (rows <= 0) continue;
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
  });
}

void Decoder::cache_keys_values(Layer& layer, int64_t lo, int64_t hi) {
  for (int64_t t = lo; t < hi; ++t) {
    const int64_t position = length_ + t;
    float* row = qkv_.data() + t * 3 * D_;  // [q | k | v], each [H, d]
    // The row's queries and keys are 2H head vectors side by side, all at one position.
    if (!rope_.cos.empty()) rope_forward(row, row, rope_, 2 * H_, 1, d_, position);
    for (int64_t hd = 0; hd < H_; ++hd) {
      const float* key = row + D_ + hd * d_;                 // [d]
      float* keys_t = layer.keys_t.data() + hd * d_ * Tp_;  // [d, Tp]
      for (int64_t j = 0; j < d_; ++j) keys_t[j * Tp_ + position] = key[j];
      std::memcpy(layer.values.data() + (hd * T_ + position) * d_, row + 2 * D_ + hd * d_, sizeof(float) * d_);
    }
  }
}

// Attention over the KV cache, the same steps as training's (nn/gpt.cpp, causal_self_attention)
// one position (or a few) at a time.
void Decoder::attend(Layer& layer, int64_t first, int64_t hi, int worker, int team) {
  // Per head, these rows in blocks of kQueryBlock: S = Q K^T over the keys the block's last
  // row sees [rows, keys], the causal softmax (masked weights exact zeros), then W V. A
  // masked weight adds 0 * v, so each row's sums are those over its visible keys alone,
  // and the keys past a block's last row (all masked for it) are never computed.
  constexpr int64_t kQueryBlock = 16;
  // Scale by the head width d, the length of each head's dot product (as training's does).
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

void Decoder::drop_oldest(int64_t count) {
  MG_CHECK(!rope_.cos.empty(), "decoder: a context shift needs RoPE positions");
  MG_CHECK(count >= 1 && count <= length_, "decoder: a context shift drops 1..length() positions");
  const int64_t kept = length_ - count;
  if (kept == 0) {  // everything dropped (block_size 1): no key is left to turn
    length_ = 0;
    return;
  }
  float* turned = h_.data();  // [kept, d] scratch: one head's kept keys as rows, for the RoPE kernel
  for (Layer& layer : layers_) {
    for (int64_t hd = 0; hd < H_; ++hd) {
      float* keys_t = layer.keys_t.data() + hd * d_ * Tp_;  // [d, Tp]
      for (int64_t j = 0; j < d_; ++j)
        for (int64_t t = 0; t < kept; ++t) turned[t * d_ + j] = keys_t[j * Tp_ + count + t];
      rope_shift(turned, turned, rope_, kept, d_, count);  // from position count + t to t
      for (int64_t j = 0; j < d_; ++j)
        for (int64_t t = 0; t < kept; ++t) keys_t[j * Tp_ + t] = turned[t * d_ + j];
      float* values = layer.values.data() + hd * T_ * d_;  // [T, d]
      std::memmove(values, values + count * d_, sizeof(float) * kept * d_);
    }
  }
  length_ = kept;
}

std::vector<float> Decoder::cached_key(int64_t layer, int64_t head, int64_t position) const {
  MG_CHECK(layer >= 0 && layer < config_.n_layer && head >= 0 && head < H_ && position >= 0 && position < length_,
           "decoder: no such cached key");
  const float* keys_t = layers_[layer].keys_t.data() + head * d_ * Tp_;  // [d, Tp]
  std::vector<float> key(static_cast<size_t>(d_));
  for (int64_t j = 0; j < d_; ++j) key[j] = keys_t[j * Tp_ + position];
  return key;
}

std::vector<float> Decoder::cached_value(int64_t layer, int64_t head, int64_t position) const {
  MG_CHECK(layer >= 0 && layer < config_.n_layer && head >= 0 && head < H_ && position >= 0 && position < length_,
           "decoder: no such cached value");
  const float* value = layers_[layer].values.data() + (head * T_ + position) * d_;
  return std::vector<float>(value, value + d_);
}

}  // namespace mg
