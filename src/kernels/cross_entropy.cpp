// Cross-entropy from logits [rows,V]: loss_r = log sum_v exp(l_v) - l_target, computed
// as (log sum_v exp(l_v - max)) - (l_target - max) so |logits| ~ 1e4 stays finite.
// Per-row losses are summed in double, in row order, so the mean does not depend on
// the thread count.
#include "kernels/cross_entropy.h"
#include "kernels/softmax_row.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "tensor/error.h"

namespace mg {
namespace {

constexpr int64_t kParallelWork = 1 << 14;

}  // namespace

double cross_entropy_forward(float* probs, const float* logits, const int32_t* targets, int64_t rows,
                             int64_t V) {
  // Per-row losses, summed in row order below. Kept between calls: a training step of
  // the same shape reuses the buffer instead of allocating one.
  // (The pool's threads see their own thread_local, so they write through a pointer.)
  thread_local std::vector<double> row_loss;
  row_loss.resize(static_cast<size_t>(rows));
  double* losses = row_loss.data();
#pragma omp parallel for if (rows * V > kParallelWork)
  for (int64_t r = 0; r < rows; ++r) {
    const float* l = logits + r * V;  // [V]
    float* p = probs + r * V;         // [V]
    const auto [max, sum] = softmax_row(p, l, V);
    losses[r] = std::log(static_cast<double>(sum)) - (static_cast<double>(l[targets[r]]) - max);
  }
  double total = 0.0;
  for (double loss : row_loss) total += loss;
  return rows > 0 ? total / static_cast<double>(rows) : 0.0;
}

// d(mean loss)/d logits = (softmax - onehot(target)) / rows, scaled by the upstream dloss.
void cross_entropy_backward(float* dlogits, const float* probs, const int32_t* targets, int64_t rows,
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
