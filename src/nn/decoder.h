// Inference for generation: the SPEC section 1 forward of one sequence, a position at a
// time, with each layer's keys and values kept (the KV cache). No autograd, no tensors:
// the weights are copied from a Gpt once and packed for matrix-vector products
// (kernels/packed_linear.h), and every buffer is sized for block_size positions up front, so
// a step allocates nothing. Each new position costs one row through every layer plus its
// attention over the cached keys.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "kernels/rope.h"
#include "nn/gpt.h"
#include "kernels/packed_linear.h"

namespace mg {

class Decoder {
 public:
  // Snapshots the model's weights: later changes to the model are not seen.
  explicit Decoder(const Gpt& model);

  const ModelConfig& config() const { return config_; }
  int64_t length() const { return length_; }  // positions held, 0..block_size

  // Forgets every position: the next append starts at position 0.
  void reset() { length_ = 0; }

  // Feeds ids [n] at positions length()..length()+n-1 (n >= 1, ending at or before
  // block_size) and returns the logits [V] for the symbol after the last. Several ids
  // at once (a prompt) share each weight panel's trip through the cache; the result is
  // bit-identical to feeding them one by one.
  std::span<const float> append(std::span<const int32_t> ids);

  // The logits [V] that the last append returned.
  std::span<const float> logits() const { return logits_; }

 private:
  struct Layer {
    std::vector<float> ln1_weight, ln1_bias, ln2_weight, ln2_bias;  // [D]
    PackedLinear qkv;       // [3D] <- [D]: Wq, Wk, Wv stacked, so one pass makes q, k and v
    PackedLinear out_proj;  // [D] <- [D]
    PackedLinear fc;        // [mlp_ratio*D] <- [D], with b1
    PackedLinear proj;      // [D] <- [mlp_ratio*D], with b2
    std::vector<float> keys_t;  // [H, d, Tp] keys after RoPE, transposed so q K^T is a vector-matrix product
    std::vector<float> values;  // [H, block_size, d] (+ 8 floats the kernel may read past the end)
  };

  // Rows first..rows-1 of the block: positions length_ + row. Writes their keys and
  // values into the cache, then attends (cached and new keys up to each row's position).
  void attention(Layer& layer, int64_t first, int64_t rows);

  ModelConfig config_;
  int64_t D_, H_, d_, T_, Tp_, V_, F_;  // width, heads, head width, block_size (Tp_: rounded up to 8),
                                        // vocabulary, MLP width
  std::vector<float> tok_emb_;     // [V, D]
  std::vector<float> pos_emb_;     // [block_size, D], learned positions only
  RopeTable rope_;                 // [block_size, d/2], RoPE only
  std::vector<Layer> layers_;
  std::vector<float> lnf_weight_, lnf_bias_;  // [D]
  PackedLinear head_;                         // [V] <- [D]
  int64_t length_ = 0;

  // Scratch for up to block_size rows, allocated once.
  std::vector<float> x_;       // [T, D] the residual stream
  std::vector<float> h_;       // [T, D] a LayerNorm's output
  std::vector<float> qkv_;     // [T, 3D]
  std::vector<float> heads_;   // [T, D] merge_heads(w @ v)
  std::vector<float> hidden_;  // [T, F]
  std::vector<float> query_;   // [d] one head's query after RoPE
  std::vector<float> scores_;  // [T] one query's scores, then its projected_weights
  std::vector<float> logits_;  // [V]
};

}  // namespace mg
