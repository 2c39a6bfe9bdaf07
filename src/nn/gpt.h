// The model of docs/model.md: token embedding (+ learned positions), n_layer pre-norm
// blocks of causal multi-head attention and a GELU MLP, a final LayerNorm and an
// untied vocabulary head. B batch, T positions, D width, H heads, d = D/H, V vocabulary.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "autograd/ops.h"
#include "kernels/rope.h"
#include "nn/hooks.h"
#include "nn/parameters.h"
#include "core/random.h"
#include "model_spec/model_config.h"

namespace mg {

struct ForwardOptions {
  bool training = false;  // dropout on
  Rng* dropout_rng = nullptr;  // required when training with dropout > 0
  // The named activation points a reader records or edits (nn/hooks.h): attention
  // patterns, head outputs, the residual stream, ablation and patching. Null (training,
  // sampling, eval) records nothing and leaves the fused kernels in charge.
  ForwardHooks* hooks = nullptr;
};

class Gpt {
 public:
  // Validates the config (ShapeError/InputError) and registers every parameter, zeroed.
  explicit Gpt(const ModelConfig& config);

  // Initialisation (docs/model.md): weights normal(0, 0.02), Wo and W2 normal(0,
  // 0.02/sqrt(2 n_layer)), biases 0, LayerNorm weight 1 and bias 0. Draws in parameter order
  // from rng.
  void initialize(Rng& rng);

  const ModelConfig& config() const { return config_; }
  Parameters& parameters() { return params_; }
  const Parameters& parameters() const { return params_; }
  // The same parameters as typed fields, built once: weights().blocks[l].q_proj.
  const ModelWeights& weights() const { return weights_; }

  // ids [B,T] (T <= block_size), row-major -> logits [B,T,V]. const: it reads the weights
  // and changes nothing of the model; the graph it returns (outside a NoGradGuard) holds
  // the parameters, so a backward through it adds to their gradients, which only a
  // holder of a non-const Gpt (training) zeroes and steps.
  Var forward(std::span<const int32_t> ids, int64_t B, int64_t T, const ForwardOptions& options = {}) const;

  // Mean next-symbol cross-entropy of forward(ids) against targets [B,T].
  Var loss(std::span<const int32_t> ids, std::span<const int32_t> targets, int64_t B, int64_t T,
           const ForwardOptions& options = {}) const;

 private:
  Var block(int64_t layer, const Var& x, const ForwardOptions& options) const;

  ModelConfig config_;
  Parameters params_;
  ModelWeights weights_;  // views of params_' tensors
  RopeTable rope_table_;  // [block_size, d/2], only for PositionType::rope
};

}  // namespace mg
