// Which build of the element-wise kernels runs on this CPU.
//
// mini-gpt is compiled for baseline x86-64 (SSE2), so it starts on any x86-64 CPU. The
// kernels where the instruction set pays (GELU, softmax, LayerNorm, RoPE, cross-entropy,
// AdamW, the decoder's matrix-vector product; kernels/cpu/) are compiled three times:
//   baseline  x86-64     SSE2, 4 floats a vector
//   avx2      x86-64-v3  AVX2 + FMA, 8 floats a vector
//   avx512    x86-64-v4  AVX-512 F/BW/CD/DQ/VL, 16 floats a vector
// and the best variant this CPU supports is chosen once, at start (kernels/cpu_kernels.h
// holds the table). oneDNN and OpenBLAS choose their own code the same way.
#pragma once

#include <string_view>
#include <vector>

namespace mg {

enum class CpuVariant { baseline, avx2, avx512 };

// The best variant this CPU (and OS: AVX state saved on context switches) supports.
CpuVariant best_cpu_variant();
// Every variant this CPU can run, baseline first.
std::vector<CpuVariant> supported_cpu_variants();

// The variant in use: best_cpu_variant() unless set. set_cpu_variant refuses (InputError)
// one this CPU cannot run, so a forced variant never ends in an illegal instruction.
CpuVariant cpu_variant();
void set_cpu_variant(CpuVariant variant);

std::string_view cpu_variant_name(CpuVariant variant);
CpuVariant parse_cpu_variant(std::string_view name);  // InputError naming the choices

}  // namespace mg
