// The one "enough work to parallelise" threshold of the kernels' OpenMP loops: below it a
// loop runs on the calling thread, since entering a region costs more than the work. On
// the default model (B=32, T=64, D=64, H=2) every training-step loop is at least 4x over
// it, so it decides only for small inputs (the decoder's rows, the tests' shapes).
#pragma once

#include <cstdint>

namespace mg {

inline constexpr int64_t kParallelWork = 1 << 15;  // elements

}  // namespace mg
