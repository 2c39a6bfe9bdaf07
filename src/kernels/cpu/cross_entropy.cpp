// Cross-entropy from logits [rows,V]: loss_r = log sum_v exp(l_v) - l_target, computed
// as (log sum_v exp(l_v - max)) - (l_target - max) so |logits| ~ 1e4 stays finite.
#include "kernels/cpu/variant.h"
#include "kernels/softmax_row.h"
#include "kernels/parallel.h"

#include <cmath>

namespace mg {
template <>
void Kernels::cross_entropy_rows(double* row_loss, float* probs, const float* logits, const int32_t* targets,
                                 int64_t rows, int64_t V) {
#pragma omp parallel for if (rows * V > kParallelWork)
  for (int64_t r = 0; r < rows; ++r) {
    const float* l = logits + r * V;  // [V]
    float* p = probs + r * V;         // [V]
    const SoftmaxRowStats stats = softmax_row(p, l, V, V);
    row_loss[r] = std::log(static_cast<double>(stats.sum)) - (static_cast<double>(l[targets[r]]) - stats.max);
  }
}

// d(mean loss)/d logits = (softmax - onehot(target)) / rows, scaled by the upstream dloss.
template <>
void Kernels::cross_entropy_backward(float* dlogits, const float* probs, const int32_t* targets, int64_t rows,
                                     int64_t V, float dloss) {
  const float factor = dloss / static_cast<float>(rows);
#pragma omp parallel for if (rows * V > kParallelWork)
  for (int64_t r = 0; r < rows; ++r) {
    const float* p = probs + r * V;
    float* d = dlogits + r * V;
    for (int64_t v = 0; v < V; ++v) d[v] += factor * p[v];
    d[targets[r]] -= factor;
  }
}

}  // namespace mg
