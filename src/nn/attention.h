// Causal multi-head self-attention of one block, the whole computation in one function a
// reader can follow top to bottom. B batch, T positions, D width, H heads, d = D/H.
#pragma once

#include <cstdint>

#include "autograd/ops.h"
#include "core/random.h"
#include "kernels/rope.h"
#include "nn/parameters.h"

namespace mg {

struct ForwardOptions;

// The attention sub-layer of block `layer`: x + attention(h) with h = ln1(x), x and h
// [B,T,D] -> [B,T,D]. Weights by their checkpoint names (blocks.<layer>.attn.{q,k,v,out}_proj.weight);
// rope null for learned positions; dropout p_drop on the weights and the branch. Records
// and edits blocks.<layer>.attn.hook_pattern, attn.hook_z and hook_attn_out as options.hooks asks.
Var causal_self_attention(const Var& x, const Var& h, const Parameters& params, int64_t layer, int64_t n_head,
                          const RopeTable* rope, float p_drop, Rng& rng, const ForwardOptions& options);

}  // namespace mg
