// Causal self-attention of every head in one kernel, for training: from the QKV projection's
// rows to the heads merged back into rows, and its backward. Per head (b, h), with q, k, v
// its [T,d] slices of the rows (feature h*d + j of part 0, 1, 2) and positions 0..T-1:
//   q, k = rope(q), rope(k)                      (when a table is given)
//   w = causal_softmax(scale * q k^T)            [T,T], the projected_weights
//   merged[b, t, h*d + j] = (w v)[t, j]          [B,T,D]
// the steps nn/attention.cpp also spells out op by op. A head's q, k, v, scores and
// gradients stay in a thread's scratch (L1/L2-sized) from first to last use, the products
// skip the key blocks the causal mask zeroes, and no re-layout of q, k, v or of the heads
// ever touches memory: the kernel reads and writes the rows where the GEMMs left them.
// Compiled per CPU variant (kernels/cpu/fused_attention.cpp).
#pragma once

#include <cstdint>

#include "kernels/rope.h"

namespace mg {

struct AttentionShape {
  int64_t B = 0, T = 0, H = 0, d = 0;  // D = H * d
};

// qkv [B,T,3D] (q, k, v side by side per row, before RoPE) -> merged [B,T,D] and, unless
// weights is null, the weights [B,H,T,T] (exact zeros where masked). table null for learned
// positions.
void causal_attention_forward(float* merged, float* weights, const float* qkv, const RopeTable* table, float scale,
                              const AttentionShape& shape);

// dqkv [B,T,3D] (+)= the gradient of the forward above through dmerged [B,T,D], from the
// forward's qkv and, when not null, its weights; null, each head's weights are made again
// from q and k as the forward made them (the same bits), one head at a time in the thread's
// cache. dq and dk are rotated back (R(-angle)), as the rows hold q and k before RoPE.
// Added when accumulate, else written.
void causal_attention_backward(float* dqkv, const float* dmerged, const float* qkv, const float* weights,
                               const RopeTable* table, float scale, const AttentionShape& shape, bool accumulate);

}  // namespace mg
