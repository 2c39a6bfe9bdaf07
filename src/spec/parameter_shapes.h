// The parameter list of docs/checkpoint.md, "Tensor names and shapes": every tensor name
// ("blocks.0.attn.q_proj.weight") and shape a model with a given config holds. nn registers its
// parameters from it; io checks a checkpoint's tensors against it without knowing the model.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "spec/model_config.h"

namespace mg {

// A parameter's name and its row-major sizes (the same type as tensor's Shape).
using NamedShape = std::pair<std::string, std::vector<int64_t>>;

// In registration order: tok_emb, pos_emb (learned positions only), the blocks, ln_f, head.
std::vector<NamedShape> expected_parameter_shapes(const ModelConfig& config);

}  // namespace mg
