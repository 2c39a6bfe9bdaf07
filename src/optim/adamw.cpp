#include "optim/adamw.h"

#include <cmath>
#include <span>
#include <vector>

#include "core/error.h"
#include "kernels/optimizer.h"

namespace mg {

AdamW::AdamW(Parameters& params, AdamWSettings settings) : settings_(settings) {
  for (const auto& p : params.all())
    states_.push_back({p.name, p.var, Tensor::zeros(p.var.shape()), Tensor::zeros(p.var.shape())});
}

AdamWState& AdamW::state(const std::string& name) {
  for (AdamWState& s : states_)
    if (s.name == name) return s;
  throw InternalError("the optimizer holds no parameter named " + name);
}

void AdamW::step(double lr) {
  ++t_;
  const double bias1 = 1.0 - std::pow(settings_.beta1, static_cast<double>(t_));
  const double bias2 = 1.0 - std::pow(settings_.beta2, static_cast<double>(t_));
  AdamWStep step;
  step.lr = lr;
  step.beta1 = settings_.beta1;
  step.beta2 = settings_.beta2;
  step.eps = settings_.eps;
  step.weight_decay = settings_.weight_decay;  // on the matrices only
  step.bias_correction1 = bias1;
  step.bias_correction2 = bias2;
  std::vector<AdamWTensor> tensors;
  tensors.reserve(states_.size());
  for (AdamWState& state : states_) {
    Var& var = state.param;
    if (!var.has_grad()) continue;
    tensors.push_back({var.value().data(), state.exp_avg.data(), state.exp_avg_sq.data(), var.grad().data(),
                       var.value().numel(), var.value().rank() == 2});
  }
  adamw_update_all(tensors, step);  // kernels/optimizer.h
}

double learning_rate(int64_t step, double lr, double min_lr, int64_t warmup_steps, int64_t max_steps) {
  if (step < warmup_steps) return lr * static_cast<double>(step + 1) / static_cast<double>(warmup_steps + 1);
  if (step >= max_steps) return min_lr;
  const double progress =
      static_cast<double>(step - warmup_steps) / static_cast<double>(std::max<int64_t>(1, max_steps - warmup_steps));
  return min_lr + 0.5 * (1.0 + std::cos(M_PI * progress)) * (lr - min_lr);
}

double clip_grad_norm(Parameters& params, double max_norm) {
  // Each parameter's sum of squares in double (kernels/optimizer.h: the same bits on any
  // thread count), then added in parameter order.
  std::vector<std::span<float>> grads;  // the parameters that have a gradient
  for (auto& p : params.all())
    if (p.var.has_grad()) grads.push_back(p.var.grad().span());
  std::vector<double> sums(grads.size(), 0.0);
  sums_of_squares(sums.data(), std::vector<std::span<const float>>(grads.begin(), grads.end()));
  double sum_sq = 0.0;
  for (double s : sums) sum_sq += s;
  const double norm = std::sqrt(sum_sq);
  if (max_norm > 0.0 && norm > max_norm) scale_all(grads, static_cast<float>(max_norm / (norm + 1e-6)));
  return norm;
}

}  // namespace mg
