// Exact GELU, x * Phi(x) = 0.5 x (1 + erf(x / sqrt 2)), element-wise over n values.
#pragma once

#include <cstdint>

namespace mg {

void gelu_forward(float* out, const float* x, int64_t n);
// dx += dout * (Phi(x) + x * phi(x)).
void gelu_backward(float* dx, const float* dout, const float* x, int64_t n);
// The same, written rather than added: dx = dout * (Phi(x) + x * phi(x)).
void gelu_backward_overwrite(float* dx, const float* dout, const float* x, int64_t n);

}  // namespace mg
