// LayerNorm over the last axis, rows of width D:
//   out = (x - mean) / sqrt(var + eps) * weight + bias     (biased variance)
// Compiled per CPU variant, declared in kernels/cpu_kernels.h's list:
//   layernorm_forward(out, mean, rstd, x, weight, bias, rows, D, eps)
//                             x, out [rows,D]; weight, bias [D]; saves mean, rstd [rows]
//                             for the backward
//   layernorm_row(out, x, weight, bias, D, eps)
//                             one row [D], on the calling thread: the decoder's per-position
//                             LayerNorm (an OpenMP region costs more to enter than a 64-wide
//                             row's work)
#pragma once

#include <cstdint>

#include "kernels/cpu_kernels.h"

namespace mg {

// The forward on the kernel of the GEMM backend in force: oneDNN's under oneDNN, else the above.
void layernorm_forward_on_backend(float* out, float* mean, float* rstd, const float* x, const float* weight,
                                  const float* bias, int64_t rows, int64_t D, float eps);
// Accumulates: dx [rows,D] +=, dweight [D] +=, dbias [D] += (any of them may be null).
void layernorm_backward(float* dx, float* dweight, float* dbias, const float* dout, const float* x,
                        const float* weight, const float* mean, const float* rstd, int64_t rows, int64_t D);

}  // namespace mg
