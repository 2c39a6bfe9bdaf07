// The model's arithmetic in double (nn/reference.h).
#include "nn/reference.h"

#include <algorithm>
#include <cmath>

namespace mg {

RowMoments layer_norm_moments(const float* x, int64_t D, double eps) {
  double mean = 0.0, var = 0.0;
  for (int64_t j = 0; j < D; ++j) mean += x[j];
  mean /= static_cast<double>(D);
  for (int64_t j = 0; j < D; ++j) var += (x[j] - mean) * (x[j] - mean);
  return {mean, std::sqrt(var / static_cast<double>(D) + eps)};
}

std::vector<double> layer_norm_row(const float* x, int64_t D, const float* gamma, const float* beta, double eps) {
  const RowMoments m = layer_norm_moments(x, D, eps);
  const double inv = 1.0 / m.sigma;
  std::vector<double> y(static_cast<size_t>(D));
  for (int64_t j = 0; j < D; ++j) y[j] = (x[j] - m.mean) * inv * gamma[j] + beta[j];
  return y;
}

std::vector<double> rows_times(const float* W, int64_t first, int64_t count, const std::vector<double>& x) {
  const int64_t D = static_cast<int64_t>(x.size());
  std::vector<double> y(static_cast<size_t>(count), 0.0);
  for (int64_t j = 0; j < count; ++j)
    for (int64_t i = 0; i < D; ++i) y[j] += static_cast<double>(W[(first + j) * D + i]) * x[i];
  return y;
}

void softmax_in_place(std::span<double> x) {
  const double m = *std::max_element(x.begin(), x.end());
  double sum = 0.0;
  for (double& v : x) sum += (v = std::exp(v - m));
  for (double& v : x) v /= sum;
}

std::vector<double> residual_add(const std::vector<double>& x, const std::vector<double>& y) {
  std::vector<double> out(x.size());
  for (size_t i = 0; i < x.size(); ++i) out[i] = x[i] + y[i];
  return out;
}

}  // namespace mg
