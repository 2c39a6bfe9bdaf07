// The model of docs/model.md: token embedding (+ learned positions), n_layer pre-norm
// blocks of causal multi-head attention and a GELU MLP, a final LayerNorm and an
// untied vocabulary head. B batch, T positions, D width, H heads, d = D/H, V vocabulary.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "autograd/ops.h"
#include "kernels/rope.h"
#include "nn/parameters.h"
#include "core/random.h"
#include "spec/model_config.h"

namespace mg {

// One head's output (w @ v, [d] per position) replaced before the out projection: by
// zeros, or by a fixed vector (mean-ablation: the head's mean output over some texts).
struct HeadAblation {
  int64_t layer = 0, head = 0;
  std::vector<float> value;  // [d], or empty for zeros
};

struct ForwardOptions {
  bool training = false;  // dropout on
  Rng* dropout_rng = nullptr;  // required when training with dropout > 0
  // When set, receives each layer's projected_weights [B,H,T,T] (the softmax output).
  std::vector<Tensor>* projected_weights = nullptr;
  // Any number of heads replaced as HeadAblation says (eval --ablate, inspect-heads'
  // importance and --roles). Inference only; a head outside the layer is an InternalError.
  std::span<const HeadAblation> ablations;
  // When set, receives the residual stream entering each block, then the one entering
  // ln_f: n_layer + 1 copies [B,T,D] (inspect-heads --trace recomputes a head from them).
  std::vector<Tensor>* residual_streams = nullptr;
  // When set, receives each layer's head outputs w @ v [B,H,T,d], before any ablation.
  std::vector<Tensor>* head_outputs = nullptr;
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

  // ids [B,T] (T <= block_size), row-major -> logits [B,T,V].
  Var forward(std::span<const int32_t> ids, int64_t B, int64_t T, const ForwardOptions& options = {});

  // Mean next-symbol cross-entropy of forward(ids) against targets [B,T].
  Var loss(std::span<const int32_t> ids, std::span<const int32_t> targets, int64_t B, int64_t T,
           const ForwardOptions& options = {});

 private:
  Var block(int64_t layer, const Var& x, const ForwardOptions& options);
  const Var& p(const std::string& name) const { return params_.get(name); }

  ModelConfig config_;
  Parameters params_;
  RopeTable rope_table_;  // [block_size, d/2], only for position == "rope"
};

}  // namespace mg
