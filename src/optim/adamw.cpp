#include "optim/adamw.h"

#include <cmath>
#include <span>
#include <vector>

#include "core/error.h"
#include "kernels/adamw.h"

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
  // One pass over every parameter, the tensors shared out over the threads (most are too
  // small to split). Each element's update is independent, so any split gives the same bits.
  const int64_t count = static_cast<int64_t>(states_.size());
#pragma omp parallel for schedule(dynamic, 1)
  for (int64_t i = 0; i < count; ++i) {
    AdamWState& state = states_[i];
    Var& var = state.param;
    if (!var.has_grad()) continue;
    const bool decay = var.value().rank() == 2;
    AdamWStep s;
    s.lr = lr;
    s.beta1 = settings_.beta1;
    s.beta2 = settings_.beta2;
    s.eps = settings_.eps;
    s.weight_decay = decay ? settings_.weight_decay : 0.0;
    s.bias_correction1 = bias1;
    s.bias_correction2 = bias2;
    adamw_update(var.value().data(), state.exp_avg.data(), state.exp_avg_sq.data(), var.grad().data(),
                 var.value().numel(), s);
  }
}

double learning_rate(int64_t step, double lr, double min_lr, int64_t warmup_steps, int64_t max_steps) {
  if (step < warmup_steps) return lr * static_cast<double>(step + 1) / static_cast<double>(warmup_steps + 1);
  if (step >= max_steps) return min_lr;
  const double progress =
      static_cast<double>(step - warmup_steps) / static_cast<double>(std::max<int64_t>(1, max_steps - warmup_steps));
  return min_lr + 0.5 * (1.0 + std::cos(M_PI * progress)) * (lr - min_lr);
}

double clip_grad_norm(Parameters& params, double max_norm) {
  // Each parameter's sum of squares in double, the parameters shared out over the threads,
  // then added in parameter order: the same bits on any thread count. Within a tensor the
  // squares go to kLanes interleaved sums, so the loop is a vector one.
  constexpr int64_t kLanes = 8;
  auto& all = params.all();
  const int64_t count = static_cast<int64_t>(all.size());
  std::vector<double> sums(static_cast<size_t>(count), 0.0);
#pragma omp parallel for schedule(dynamic, 1)
  for (int64_t i = 0; i < count; ++i) {
    if (!all[i].var.has_grad()) continue;
    const std::span<const float> g = all[i].var.grad().span();
    double lanes[kLanes] = {};
    const int64_t n = static_cast<int64_t>(g.size());
    int64_t j = 0;
    for (; j + kLanes <= n; j += kLanes)
      for (int64_t l = 0; l < kLanes; ++l) lanes[l] += static_cast<double>(g[j + l]) * g[j + l];
    for (int64_t l = 0; j + l < n; ++l) lanes[l] += static_cast<double>(g[j + l]) * g[j + l];
    for (double lane : lanes) sums[i] += lane;
  }
  double sum_sq = 0.0;
  for (double s : sums) sum_sq += s;
  const double norm = std::sqrt(sum_sq);
  if (max_norm > 0.0 && norm > max_norm) {
    const float factor = static_cast<float>(max_norm / (norm + 1e-6));
#pragma omp parallel for schedule(dynamic, 1)
    for (int64_t i = 0; i < count; ++i)
      if (all[i].var.has_grad())
        for (float& g : all[i].var.grad().span()) g *= factor;
  }
  return norm;
}

}  // namespace mg
