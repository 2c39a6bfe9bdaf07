// Included first by every file of kernels/cpu/: names the variant this compilation is for.
// CMakeLists.txt compiles each of these files three times, with -march=x86-64,
// -march=x86-64-v3 and -march=x86-64-v4 and MG_CPU_VARIANT = baseline, avx2, avx512.
#pragma once

#include "kernels/cpu_kernels.h"

#ifndef MG_CPU_VARIANT
#error "kernels/cpu/ is compiled once per CPU variant: MG_CPU_VARIANT must name it (see CMakeLists.txt)"
#endif

namespace mg {
using Kernels = CpuKernels<CpuVariant::MG_CPU_VARIANT>;
}  // namespace mg
