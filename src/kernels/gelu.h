// Exact GELU, x * Phi(x) = 0.5 x (1 + erf(x / sqrt 2)), element-wise over n values.
#pragma once

#include <cstdint>

namespace mg {

void gelu_forward(float* out, const float* x, int64_t n);
// out = x Phi(x) and slope = Phi(x) + x phi(x) (d out / dx) in one pass, for a backward that
// then needs only a product with the slope (the fused MLP). slope may alias x.
void gelu_forward_with_slope(float* out, float* slope, const float* x, int64_t n);
// dx (+)= dout * (Phi(x) + x * phi(x)): added when accumulate, else written.
void gelu_backward(float* dx, const float* dout, const float* x, int64_t n, bool accumulate);

// The same on the kernels of the GEMM backend in force: oneDNN's under oneDNN, else the above.
void gelu_forward_on_backend(float* out, const float* x, int64_t n);
void gelu_backward_on_backend(float* dx, const float* dout, const float* x, int64_t n, bool accumulate);

}  // namespace mg
