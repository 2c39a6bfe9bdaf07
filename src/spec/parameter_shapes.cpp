#include "spec/parameter_shapes.h"

namespace mg {

std::vector<NamedShape> expected_parameter_shapes(const ModelConfig& c) {
  const int64_t D = c.n_embd, V = c.vocab_size, F = c.mlp_ratio * c.n_embd;
  std::vector<NamedShape> shapes;
  shapes.push_back({"tok_emb.weight", {V, D}});
  if (c.position == "learned") shapes.push_back({"pos_emb.weight", {c.block_size, D}});
  for (int64_t i = 0; i < c.n_layer; ++i) {
    const std::string b = "blocks." + std::to_string(i) + ".";
    shapes.push_back({b + "ln1.weight", {D}});
    shapes.push_back({b + "ln1.bias", {D}});
    for (const char* proj : {"q_proj", "k_proj", "v_proj", "out_proj"})
      shapes.push_back({b + "attn." + proj + ".weight", {D, D}});
    shapes.push_back({b + "ln2.weight", {D}});
    shapes.push_back({b + "ln2.bias", {D}});
    shapes.push_back({b + "mlp.fc.weight", {F, D}});
    shapes.push_back({b + "mlp.fc.bias", {F}});
    shapes.push_back({b + "mlp.proj.weight", {D, F}});
    shapes.push_back({b + "mlp.proj.bias", {D}});
  }
  shapes.push_back({"ln_f.weight", {D}});
  shapes.push_back({"ln_f.bias", {D}});
  shapes.push_back({"head.weight", {V, D}});
  return shapes;
}

}  // namespace mg
