// Causal self-attention of every head in one kernel, for training: from the QKV projection's
// rows to the heads merged back into rows, and its backward. Per head (b, h), with q, k, v
// its [T,d] slices of the rows (feature h*d + j of part 0, 1, 2) and positions 0..T-1:
//   q, k = rope(q), rope(k)                      (when a table is given)
//   w = causal_softmax(scale * q k^T)            [T,T], the projected_weights
//   merged[b, t, h*d + j] = (w v)[t, j]          [B,T,D]
// the steps nn/gpt.cpp's causal_self_attention also spells out op by op. A head's q, k, v,
// scores and gradients stay in a thread's scratch (L1/L2-sized) from first to last use, the
// products skip the key blocks the causal mask zeroes, and no re-layout of q, k, v or of the
// heads ever touches memory: the kernel reads and writes the rows where the GEMMs left them.
// The kernel is two entries of kernels/cpu_kernels.h's list, compiled per CPU variant
// (bodies: kernels/cpu/fused_attention.cpp), each called with the workspace below:
//   attention_heads_forward(merged, weights, qkv, cos_pairs, sin_pairs, scale, B, T, H, d,
//                           scratch, threads)
//     qkv [B,T,3D] (q, k, v side by side per row, before RoPE) -> merged [B,T,D] and, unless
//     weights is null, the weights [B,H,T,T] (exact zeros where masked).
//   attention_heads_backward(dqkv, dmerged, qkv, weights, cos_pairs, sin_pairs, scale, B, T, H,
//                            d, accumulate, scratch, threads)
//     dqkv [B,T,3D] (+)= the gradient of the forward above through dmerged [B,T,D], from the
//     forward's qkv and, when not null, its weights; null, each head's weights are made again
//     from q and k as the forward made them (the same bits), one head at a time in the
//     thread's cache. dq and dk are rotated back (R(-angle)), as the rows hold q and k before
//     RoPE. Added when accumulate, else written.
#pragma once

#include <cstdint>

#include "kernels/cpu_kernels.h"
#include "kernels/rope.h"

namespace mg {

struct AttentionShape {
  int64_t B = 0, T = 0, H = 0, d = 0;  // D = H * d
};

// What a call of the fused kernel needs besides its tensors.
struct AttentionWorkspace {
  const float* cos_pairs = nullptr;  // the RoPE table's cos_pairs, sin_pairs [T, d]; null for
  const float* sin_pairs = nullptr;  // learned positions
  int threads = 1;                   // the heads split over threads only when their products pay
                                     // for a team (kernels/parallel.h)
  float* scratch = nullptr;          // threads x attention_scratch_floats(T, d), kept by the
                                     // calling thread between calls (a step of the same shape
                                     // allocates nothing)
};

// The workspace of a call on SHAPE with TABLE (null: learned positions); checks that the table
// covers it. Charges DENSE_PRODUCTS products of T x T x d per head to the profile's attention
// FLOPs (the forward's 2: w, w v; the backward's 4: dw, dq, dk, dv): the dense products the
// kernel replaces, so a step's FLOPs are the model's whichever kernel runs (the kernel itself
// skips the masked blocks).
AttentionWorkspace attention_workspace(const AttentionShape& shape, const RopeTable* table, int dense_products);

}  // namespace mg
