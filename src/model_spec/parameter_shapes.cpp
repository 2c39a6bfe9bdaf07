// The one place a parameter's name is written (docs/checkpoint.md, "Tensor names and shapes").
#include "model_spec/parameter_shapes.h"

namespace mg {

ModelParameterNames parameter_names(const ModelConfig& c) {
  ModelParameterNames n;
  n.tok_emb = "tok_emb.weight";
  if (c.position == PositionType::learned) n.pos_emb = "pos_emb.weight";
  for (int64_t i = 0; i < c.n_layer; ++i) {
    const std::string b = "blocks." + std::to_string(i) + ".";
    n.blocks.push_back({.ln1_weight = b + "ln1.weight", .ln1_bias = b + "ln1.bias",
                        .q_proj = b + "attn.q_proj.weight", .k_proj = b + "attn.k_proj.weight",
                        .v_proj = b + "attn.v_proj.weight", .out_proj = b + "attn.out_proj.weight",
                        .ln2_weight = b + "ln2.weight", .ln2_bias = b + "ln2.bias",
                        .fc_weight = b + "mlp.fc.weight", .fc_bias = b + "mlp.fc.bias",
                        .proj_weight = b + "mlp.proj.weight", .proj_bias = b + "mlp.proj.bias"});
  }
  n.ln_f_weight = "ln_f.weight";
  n.ln_f_bias = "ln_f.bias";
  n.head = "head.weight";
  return n;
}

std::vector<NamedShape> expected_parameter_shapes(const ModelConfig& c) {
  const int64_t D = c.n_embd, V = c.vocab_size, F = c.mlp_ratio * c.n_embd;
  const ModelParameterNames n = parameter_names(c);
  std::vector<NamedShape> shapes;
  shapes.push_back({n.tok_emb, {V, D}});
  if (!n.pos_emb.empty()) shapes.push_back({n.pos_emb, {c.block_size, D}});
  for (const BlockOf<std::string>& b : n.blocks) {
    shapes.push_back({b.ln1_weight, {D}});
    shapes.push_back({b.ln1_bias, {D}});
    for (const std::string& proj : {b.q_proj, b.k_proj, b.v_proj, b.out_proj}) shapes.push_back({proj, {D, D}});
    shapes.push_back({b.ln2_weight, {D}});
    shapes.push_back({b.ln2_bias, {D}});
    shapes.push_back({b.fc_weight, {F, D}});
    shapes.push_back({b.fc_bias, {F}});
    shapes.push_back({b.proj_weight, {D, F}});
    shapes.push_back({b.proj_bias, {D}});
  }
  shapes.push_back({n.ln_f_weight, {D}});
  shapes.push_back({n.ln_f_bias, {D}});
  shapes.push_back({n.head, {V, D}});
  return shapes;
}

}  // namespace mg
