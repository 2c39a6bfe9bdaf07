// The parameter list of docs/checkpoint.md, "Tensor names and shapes": every tensor name
// ("blocks.0.attn.q_proj.weight") and shape a model with a given config holds. The names are
// spelt here and nowhere else in src/: nn registers its parameters from this list and reads
// them through the typed view ModelOf<Var> (nn/parameters.h); io checks a checkpoint's
// tensors against it without knowing the model.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "model_spec/model_config.h"

namespace mg {

// One block's tensors, one field each, W a name (here) or a weight (nn's BlockWeights).
// Shapes: F = mlp_ratio * D.
template <class W>
struct BlockOf {
  W ln1_weight, ln1_bias;          // [D], [D]
  W q_proj, k_proj, v_proj;        // [D,D] each, [out,in]: head h owns rows h*d .. h*d+d-1
  W out_proj;                      // [D,D]: head h is read by columns h*d .. h*d+d-1
  W ln2_weight, ln2_bias;          // [D], [D]
  W fc_weight, fc_bias;            // [F,D], [F]
  W proj_weight, proj_bias;        // [D,F], [D]
};

// The whole model's tensors in registration order: tok_emb, pos_emb, the blocks, ln_f, head.
template <class W>
struct ModelOf {
  W tok_emb;                       // [V,D]
  W pos_emb;                       // [block_size,D], learned positions only (else empty)
  std::vector<BlockOf<W>> blocks;  // n_layer
  W ln_f_weight, ln_f_bias;        // [D], [D]
  W head;                          // [V,D], the vocabulary head, untied
};

// Each name passed through f (nn: name -> its registered weight); map_model skips an empty pos_emb.
template <class To, class From, class F>
BlockOf<To> map_block(const BlockOf<From>& b, F&& f) {
  return {.ln1_weight = f(b.ln1_weight), .ln1_bias = f(b.ln1_bias), .q_proj = f(b.q_proj), .k_proj = f(b.k_proj),
          .v_proj = f(b.v_proj), .out_proj = f(b.out_proj), .ln2_weight = f(b.ln2_weight), .ln2_bias = f(b.ln2_bias),
          .fc_weight = f(b.fc_weight), .fc_bias = f(b.fc_bias), .proj_weight = f(b.proj_weight),
          .proj_bias = f(b.proj_bias)};
}

template <class To, class F>
ModelOf<To> map_model(const ModelOf<std::string>& m, F&& f) {
  ModelOf<To> r;
  r.tok_emb = f(m.tok_emb);
  if (!m.pos_emb.empty()) r.pos_emb = f(m.pos_emb);
  for (const BlockOf<std::string>& b : m.blocks) r.blocks.push_back(map_block<To>(b, f));
  r.ln_f_weight = f(m.ln_f_weight);
  r.ln_f_bias = f(m.ln_f_bias);
  r.head = f(m.head);
  return r;
}

using ModelParameterNames = ModelOf<std::string>;

// Every parameter's checkpoint name ("blocks.0.attn.q_proj.weight"); pos_emb empty for RoPE.
ModelParameterNames parameter_names(const ModelConfig& config);

// A parameter's name and its row-major sizes (the same type as tensor's Shape).
using NamedShape = std::pair<std::string, std::vector<int64_t>>;

// In registration order: tok_emb, pos_emb (learned positions only), the blocks, ln_f, head.
std::vector<NamedShape> expected_parameter_shapes(const ModelConfig& config);

}  // namespace mg
