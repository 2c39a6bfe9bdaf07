// Causal multi-head self-attention of one block, the whole computation in one function a
// reader can follow top to bottom. B batch, T positions, D width, H heads, d = D/H.
#pragma once

#include <cstdint>

#include "autograd/ops.h"
#include "core/random.h"
#include "kernels/rope.h"
#include "nn/parameters.h"

namespace mg {

class ForwardHooks;

// What one block's attention needs besides its inputs and weights.
struct BlockContext {
  int64_t layer = 0;              // names the hook points blocks.<layer>.attn.*
  int64_t n_head = 1;             // H
  const RopeTable* rope = nullptr;  // null for learned positions
  float p_drop = 0.0f;            // dropout on the weights and the branch (training only)
  Rng& rng;                       // dropout's draws
  ForwardHooks* hooks = nullptr;  // null: nothing recorded, the fused kernel runs
};

// The attention sub-layer of one block: x + attention(h) with h = ln1(x), x and h [B,T,D]
// -> [B,T,D], with the block's q_proj, k_proj, v_proj and out_proj. Records and edits
// blocks.<layer>.attn.hook_pattern, attn.hook_z and hook_attn_out as context.hooks asks.
Var causal_self_attention(const Var& x, const Var& h, const BlockWeights& weights, const BlockContext& context);

}  // namespace mg
