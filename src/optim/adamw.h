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

class AdamW {
 public:
  AdamW(Parameters& params, AdamWSettings settings);

  // One update of every parameter from its gradient; t (steps taken) grows by one.
  void step(double lr);

  int64_t steps_taken() const { return t_; }
  void set_steps_taken(int64_t t) { t_ = t; }

  // Moments by the parameter's index in params.all(): exp_avg [shape], exp_avg_sq [shape].
  std::vector<Tensor>& exp_avg() { return exp_avg_; }
  std::vector<Tensor>& exp_avg_sq() { return exp_avg_sq_; }
  const std::vector<Tensor>& exp_avg() const { return exp_avg_; }
  const std::vector<Tensor>& exp_avg_sq() const { return exp_avg_sq_; }

 private:
  Parameters& params_;
  AdamWSettings settings_;
  int64_t t_ = 0;
  std::vector<Tensor> exp_avg_, exp_avg_sq_;
};

// Linear warm-up from lr/(warmup+1) to lr over warmup_steps, then cosine decay to min_lr
// at max_steps (nanoGPT's schedule; step 0 already trains).
double learning_rate(int64_t step, double lr, double min_lr, int64_t warmup_steps, int64_t max_steps);

// Scales every gradient by max_norm / (norm + 1e-6) when the global L2 norm exceeds
// max_norm (as torch's clip_grad_norm_). Returns the norm before clipping. max_norm 0: no clip.
double clip_grad_norm(Parameters& params, double max_norm);

}  // namespace mg
