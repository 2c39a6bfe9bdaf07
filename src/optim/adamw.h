// AdamW (Loshchilov & Hutter): Adam moments with decoupled weight decay, applied only
// to the 2-D weight matrices (embeddings, projections, head), never to biases or
// LayerNorm parameters. The update matches torch.optim.AdamW:
//   p -= lr * wd * p
//   m = b1 m + (1 - b1) g;   v = b2 v + (1 - b2) g^2
//   p -= lr * (m / (1 - b1^t)) / (sqrt(v / (1 - b2^t)) + eps)
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "nn/parameters.h"

namespace mg {

struct AdamWSettings {
  double beta1 = 0.9, beta2 = 0.99, eps = 1e-8, weight_decay = 0.1;
};

// One parameter's optimizer state, under the parameter's name: checkpoints store the
// moments as optim.exp_avg.NAME and optim.exp_avg_sq.NAME.
struct AdamWState {
  std::string name;   // the parameter's, "blocks.0.attn.q_proj.weight"
  Var param;          // the parameter itself
  Tensor exp_avg;     // m [the parameter's shape]
  Tensor exp_avg_sq;  // v [the parameter's shape]
};

class AdamW {
 public:
  // A zero state for every parameter of PARAMS.
  AdamW(Parameters& params, AdamWSettings settings);

  // One update of every parameter from its gradient; t (steps taken) grows by one.
  void step(double lr);

  int64_t steps_taken() const { return t_; }
  void set_steps_taken(int64_t t) { t_ = t; }

  // Every parameter's state, in the parameters' registration order, and one by name
  // (InternalError when no parameter has that name).
  std::vector<AdamWState>& states() { return states_; }
  const std::vector<AdamWState>& states() const { return states_; }
  AdamWState& state(const std::string& name);

 private:
  AdamWSettings settings_;
  int64_t t_ = 0;
  std::vector<AdamWState> states_;
};

// Linear warm-up from lr/(warmup+1) to lr over warmup_steps, then cosine decay to min_lr
// at max_steps (nanoGPT's schedule; step 0 already trains).
double learning_rate(int64_t step, double lr, double min_lr, int64_t warmup_steps, int64_t max_steps);

// Scales every gradient by max_norm / (norm + 1e-6) when the global L2 norm exceeds
// max_norm (as torch's clip_grad_norm_). Returns the norm before clipping. max_norm 0: no clip.
double clip_grad_norm(Parameters& params, double max_norm);

}  // namespace mg
