// The optimizer's loops over a model's tensors (optimizer.h): OpenMP over the tensors, each
// tensor's own arithmetic in the per-CPU-variant kernels (cpu/adamw_update.cpp).
#include "kernels/optimizer.h"

namespace mg {

void adamw_update_all(std::span<const AdamWTensor> tensors, const AdamWStep& step) {
  const int64_t count = static_cast<int64_t>(tensors.size());
#pragma omp parallel for schedule(dynamic, 1)
  for (int64_t i = 0; i < count; ++i) {
    const AdamWTensor& t = tensors[i];
    AdamWStep s = step;
    if (!t.decay) s.weight_decay = 0.0;
    adamw_update(t.param, t.exp_avg, t.exp_avg_sq, t.grad, t.n, s);
  }
}

void sums_of_squares(double* sums, std::span<const std::span<const float>> tensors) {
  constexpr int64_t kLanes = 8;
  const int64_t count = static_cast<int64_t>(tensors.size());
#pragma omp parallel for schedule(dynamic, 1)
  for (int64_t i = 0; i < count; ++i) {
    const std::span<const float> g = tensors[i];
    double lanes[kLanes] = {};
    const int64_t n = static_cast<int64_t>(g.size());
    int64_t j = 0;
    for (; j + kLanes <= n; j += kLanes)
      for (int64_t l = 0; l < kLanes; ++l) lanes[l] += static_cast<double>(g[j + l]) * g[j + l];
    for (int64_t l = 0; j + l < n; ++l) lanes[l] += static_cast<double>(g[j + l]) * g[j + l];
    double sum = 0.0;
    for (double lane : lanes) sum += lane;
    sums[i] = sum;
  }
}

void scale_all(std::span<const std::span<float>> tensors, float factor) {
  const int64_t count = static_cast<int64_t>(tensors.size());
#pragma omp parallel for schedule(dynamic, 1)
  for (int64_t i = 0; i < count; ++i)
    for (float& g : tensors[i]) g *= factor;
}

}  // namespace mg
