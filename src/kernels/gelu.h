// Exact GELU, x * Phi(x) = 0.5 x (1 + erf(x / sqrt 2)), element-wise over n values.
//   gelu_forward(out, x, n)                       out = x Phi(x)
//   gelu_forward_with_slope(out, slope, x, n)     and slope = Phi(x) + x phi(x) (d out / dx) in
//                                                 one pass, for a backward that then needs only a
//                                                 product with the slope (the fused MLP); slope
//                                                 may alias x
//   gelu_backward(dx, dout, x, n, accumulate)     dx (+)= dout * (Phi(x) + x phi(x)): added when
//                                                 accumulate, else written
// are compiled per CPU variant and declared in kernels/cpu_kernels.h's list.
#pragma once

#include <cstdint>

#include "kernels/cpu_kernels.h"

namespace mg {

// The same on the kernels of the GEMM backend in force: oneDNN's under oneDNN, else the above.
void gelu_forward_on_backend(float* out, const float* x, int64_t n);
void gelu_backward_on_backend(float* dx, const float* dout, const float* x, int64_t n, bool accumulate);

}  // namespace mg
