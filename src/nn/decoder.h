// Inference for generation: the forward of docs/model.md for one sequence, a position at a
// time, with each layer's keys and values kept (the KV cache). No autograd, no tensors:
// a schedule over the row kernels of kernels/ (LayerNorm row, RoPE, softmax row, GELU,
// the packed matrix products), on weights copied from a Gpt once and packed. Every
// buffer is sized for block_size positions up front, so a step allocates nothing. A new
// position costs one row through every layer plus its attention over the cached keys;
// many positions at once (a prompt, a rebuilt window) go through each layer as matrix
// products of all their rows.
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

  // Context shift (RoPE models only; learned positions have no rotation to shift): forgets
  // the oldest `count` positions (1..length()) and moves the others down to positions
  // 0..length()-count-1. Their cached keys are turned back by count positions and their
  // values kept, with no recomputation; from layer 1 on those keys and values were
  // computed with the forgotten positions in context, so later logits are not those of
  // a fresh forward over the kept symbols.
  void drop_oldest(int64_t count);

  // One head's cached key (after RoPE) and value [d] at a position below length(): tests.
  std::vector<float> cached_key(int64_t layer, int64_t head, int64_t position) const;
  std::vector<float> cached_value(int64_t layer, int64_t head, int64_t position) const;

 private:
  struct Layer {
    std::vector<float> ln1_weight, ln1_bias, ln2_weight, ln2_bias;  // [D]
    PackedLinear qkv;       // [3D] <- [D]: Wq, Wk, Wv stacked, so one pass makes q, k and v
    PackedLinear out_proj;  // [D] <- [D]
    PackedLinear fc;        // [mlp_ratio*D] <- [D], with b1
    PackedLinear proj;      // [D] <- [mlp_ratio*D], with b2
    std::vector<float> keys_t;  // [H, d, Tp] keys after RoPE, transposed so Q K^T is a row-times-matrix product
    std::vector<float> values;  // [H, block_size, d] (+ 8 floats the kernel may read past the end)
  };

  // The rows of an append of ids (positions length_ + row) through every layer. Many rows
  // (a prompt, a rebuilt window) are split over the threads (run_workers): each worker
  // takes a share of the rows through every row-wise step and a share of the attention's
  // (head, query block) pieces, meeting at a barrier before and after each attention. A
  // row's arithmetic does not depend on the split, so neither do the bits. A few rows (a
  // generation step) stay on the calling thread: a region costs more than their work.
  void forward_rows(std::span<const int32_t> ids);
  // RoPE on rows lo..hi-1's queries and keys; their keys and values join the cache.
  void cache_keys_values(Layer& layer, int64_t lo, int64_t hi);
  // Rows first..hi-1 attend to the cache (keys up to each row's position) into heads_:
  // of the (query block, head) pieces, worker w of `team` takes every team-th from w on, in
  // its own scores.
  void attend(Layer& layer, int64_t first, int64_t hi, int worker, int team);

  ModelConfig config_;
  int64_t D_, H_, d_, T_, Tp_, V_, F_;  // width, heads, head width, block_size (Tp_: rounded up to 8),
                                        // vocabulary, MLP width
  std::vector<float> tok_emb_;     // [V, D]
  std::vector<float> pos_emb_;     // [block_size, D], learned positions only
  RopeTable rope_;                 // [block_size, d/2], RoPE only
  std::vector<Layer> layers_;
  std::vector<float> symbol_qkv_;  // [V, 3D] layer 0's q, k, v before RoPE per symbol (RoPE models), or empty
  std::vector<float> lnf_weight_, lnf_bias_;  // [D]
  PackedLinear head_;                         // [V] <- [D]
  int64_t length_ = 0;

  // Scratch for up to block_size rows, allocated once.
  std::vector<float> x_;       // [T, D] the residual stream
  std::vector<float> h_;       // [T, D] a LayerNorm's output
  std::vector<float> qkv_;     // [T, 3D]
  std::vector<float> heads_;   // [T, D] merge_heads(w @ v)
  std::vector<float> hidden_;  // [T, F]
  int max_workers_ = 1;        // threads a many-row append may use (scores_ has room for each)
  std::vector<float> scores_;  // [max_workers, T, Tp]: per worker, one piece's scores, then its weights
  std::vector<float> logits_;  // [V]
};

}  // namespace mg
