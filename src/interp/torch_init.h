// PyTorch's CPU random numbers and nn.Linear's default initialisation, reproduced in C++ so
// that mini-gpt can make the very weights of a PyTorch snippet without PyTorch. Lesson 12
// fixes its toy's projections with torch.manual_seed(42) and four nn.Linear(4, 4,
// bias=False); `mini-gpt lesson 12` rebuilds them here.
//
// What PyTorch (1.13 and later, CPU) does, and so what this file does:
//   torch.manual_seed(s)   the default CPU generator becomes MT19937 seeded with s & 0xffffffff
//                          (Matsumoto and Nishimura's init_genrand: the standard's std::mt19937)
//   tensor.uniform_(a, b)  float32: for each element in order, one 32-bit draw r;
//                          u = (r & (2^24 - 1)) * 2^-24 in float; value = u * (b - a) + a in float,
//                          a and b first cast to float
//   nn.Linear(in, out)     weight [out,in] = uniform_(-bound, bound) with kaiming_uniform_'s
//                          bound for a = sqrt(5): gain = sqrt(2 / (1 + a^2)),
//                          bound = sqrt(3) * gain / sqrt(fan_in), in double (= 1/sqrt(fan_in))
// The test (tests/lesson_test.cpp) holds the draws against the values PyTorch prints.
#pragma once

#include <cstdint>
#include <random>

#include "tensor/tensor.h"

namespace mg {

class TorchCpuGenerator {
 public:
  explicit TorchCpuGenerator(uint64_t seed) : engine_(static_cast<uint32_t>(seed & 0xffffffffu)) {}
  uint32_t random() { return static_cast<uint32_t>(engine_()); }  // CPUGeneratorImpl::random
  // at::uniform_real_distribution<float>: one draw in [from, to).
  float uniform(float from, float to);

 private:
  std::mt19937 engine_;  // the standard fixes every output: the 10000th of seed 5489 is 4123659995
};

// torch.nn.init.kaiming_uniform_(w, a)'s bound for a weight whose fan_in is FAN_IN
// (leaky_relu gain), computed in the order init.py computes it.
double kaiming_uniform_bound(int64_t fan_in, double a);

// nn.Linear(in_features, out_features, bias=False)'s weight [out,in] as PyTorch draws it from
// GENERATOR (its bias, when it has one, is drawn after the weight; not made here).
Tensor torch_linear_weight(TorchCpuGenerator& generator, int64_t in_features, int64_t out_features);

}  // namespace mg
