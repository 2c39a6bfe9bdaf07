// PyTorch's CPU uniform draws and nn.Linear's initialisation (interp/torch_init.h).
#include "interp/torch_init.h"

#include <cmath>

namespace mg {

float TorchCpuGenerator::uniform(float from, float to) {
  constexpr uint32_t kMask = (1u << 24) - 1;        // float's 24 significand bits
  constexpr float kDivisor = 1.0f / (1u << 24);     // 2^-24, exact
  const float u = static_cast<float>(random() & kMask) * kDivisor;  // exact: a multiple of 2^-24 below 1
  return u * (to - from) + from;                    // float arithmetic, as dist_acctype<float> is float
}

double kaiming_uniform_bound(int64_t fan_in, double a) {
  const double gain = std::sqrt(2.0 / (1.0 + std::pow(a, 2.0)));  // calculate_gain("leaky_relu", a)
  const double std_dev = gain / std::sqrt(static_cast<double>(fan_in));
  return std::sqrt(3.0) * std_dev;
}

Tensor torch_linear_weight(TorchCpuGenerator& generator, int64_t in_features, int64_t out_features) {
  const double bound = kaiming_uniform_bound(in_features, std::sqrt(5.0));
  const float from = static_cast<float>(-bound), to = static_cast<float>(bound);
  Tensor weight = Tensor::empty({out_features, in_features});  // [out,in], filled in row-major order
  for (int64_t i = 0; i < weight.numel(); ++i) weight[i] = generator.uniform(from, to);
  return weight;
}

}  // namespace mg
