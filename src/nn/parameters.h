// Parameters registered by name (the checkpoint's tensor names of docs/checkpoint.md,
// "blocks.0.attn.q_proj.weight"), in a fixed order, so checkpoints, the optimizer and inspect-heads
// all walk the same list.
#pragma once

#include <string>
#include <vector>

#include "autograd/var.h"
#include "model_spec/parameter_shapes.h"  // the names and shapes a Gpt registers

namespace mg {

struct NamedParameter {
  std::string name;
  Var var;  // a leaf with requires_grad
};

class Parameters {
 public:
  // Registers a zero-filled parameter; the name must be new.
  Var add(const std::string& name, Shape shape);
  const Var& get(const std::string& name) const;  // InternalError when absent
  Var& get(const std::string& name);
  bool contains(const std::string& name) const;
  const std::vector<NamedParameter>& all() const { return list_; }
  std::vector<NamedParameter>& all() { return list_; }
  int64_t element_count() const;
  void zero_grad();

 private:
  std::vector<NamedParameter> list_;
};

// The parameters as typed fields (model_spec/parameter_shapes.h): weights.blocks[l].q_proj is
// blocks.<l>.attn.q_proj.weight. Each Var shares its tensor with the list's entry, so a write
// into one (a checkpoint's load, an optimizer step) is seen through the other.
using BlockWeights = BlockOf<Var>;
using ModelWeights = ModelOf<Var>;

// Looks each of config's names up once; InternalError when one is missing.
ModelWeights model_weights(const Parameters& params, const ModelConfig& config);

}  // namespace mg
