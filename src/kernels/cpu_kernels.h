// The kernels compiled once per CPU variant (kernels/cpu_variant.h), and the table that
// picks one variant's copies at run time. This is the one place a CPU variant is chosen.
//
// MG_CPU_KERNELS lists every such kernel once; CpuKernels<V> declares them and
// CpuKernelTable holds them, both from that list. Each file of kernels/cpu/ defines them
// for the variant its build names (MG_CPU_VARIANT, set by CMakeLists.txt) and is compiled
// three times with three -march flags. Those files use no std:: containers or other
// out-of-line templates: an inline function emitted by a -march=x86-64-v4 object could be
// picked by the linker for baseline callers too (tests/cpu_objects_test.sh checks).
//
// The public entry points (gelu.h, softmax.h, ...) are defined in kernels/cpu_dispatch.cpp
// as one call through the active table, so a caller never sees the variants.
#pragma once

#include <cstdint>

#include "kernels/adamw.h"
#include "kernels/cpu_variant.h"
#include "kernels/rope.h"

namespace mg {

// Every kernel compiled per CPU variant, declared once: X(name, return type, (parameters)).
// From this list come CpuKernels<V>'s declarations, CpuKernelTable's fields and the table
// of each variant (cpu_variant.cpp); a new kernel is one line here plus its body in
// kernels/cpu/ (and, when callers outside kernels/ need it, its entry in cpu_dispatch.cpp).
#define MG_CPU_KERNELS(X)                                                                                          \
  /* gelu.h */                                                                                                     \
  X(gelu_forward, void, (float* out, const float* x, int64_t n))                                                   \
  X(gelu_forward_with_slope, void, (float* out, float* slope, const float* x, int64_t n))                          \
  X(gelu_backward, void, (float* dx, const float* dout, const float* x, int64_t n))                                \
  X(gelu_backward_overwrite, void, (float* dx, const float* dout, const float* x, int64_t n))                      \
  /* softmax.h; softmax_backward_rows: dscores (+)= scale * w * (dw - <w, dw>) per row. */                         \
  X(causal_softmax_forward, void, (float* weights, const float* scores, int64_t batch, int64_t Tq, int64_t Tk))    \
  X(softmax_backward_rows, void,                                                                                   \
    (float* dscores, const float* dweights, const float* weights, int64_t batch, int64_t Tq, int64_t Tk,           \
     float scale, bool accumulate))                                                                                \
  /* layernorm.h. The backward sums dweight, dbias per fixed block of rows into partials [blocks, D] (zero on      \
     entry) that the caller adds in block order; layernorm_row: one row, no threads (the decoder's). */            \
  X(layernorm_forward, void,                                                                                       \
    (float* out, float* mean, float* rstd, const float* x, const float* weight, const float* bias, int64_t rows,   \
     int64_t D, float eps))                                                                                        \
  X(layernorm_backward_blocks, void,                                                                               \
    (float* dx, float* dweight_part, float* dbias_part, const float* dout, const float* x, const float* weight,    \
     const float* mean, const float* rstd, int64_t rows, int64_t D, int64_t row_block))                            \
  X(layernorm_row, void, (float* out, const float* x, const float* weight, const float* bias, int64_t D, float eps)) \
  /* rope.h: cos, sin [positions, d/2] rows of the table, starting at position offset; relayout_qkv's cos, sin    \
     [T, d/2] from position offset on, or null. */                                                                 \
  X(rope_rotate, void,                                                                                             \
    (float* out, const float* x, const float* cos, const float* sin, int64_t rows, int64_t T, int64_t d,           \
     bool inverse, bool accumulate))                                                                               \
  X(relayout_qkv, void,                                                                                            \
    (float* out, const float* in, const float* cos, const float* sin, int64_t B, int64_t T, int64_t H, int64_t d,  \
     bool to_heads))                                                                                               \
  /* cross_entropy.h: row_loss [rows] in double, summed by the caller in row order. */                             \
  X(cross_entropy_rows, void,                                                                                      \
    (double* row_loss, float* probs, const float* logits, const int32_t* targets, int64_t rows, int64_t V))        \
  X(cross_entropy_backward, void,                                                                                  \
    (float* dlogits, const float* probs, const int32_t* targets, int64_t rows, int64_t V, float dloss))            \
  /* attention.h. cos, sin: the RoPE table's cos_pairs, sin_pairs [T, d] or null; scratch holds threads x         \
     attention_scratch_floats. */                                                                                  \
  X(attention_scratch_floats, int64_t, (int64_t T, int64_t d))                                                     \
  X(causal_attention_forward, void,                                                                                \
    (float* merged, float* weights, const float* qkv, const float* cos, const float* sin, float scale, int64_t B,  \
     int64_t T, int64_t H, int64_t d, float* scratch, int threads))                                                \
  X(causal_attention_backward, void,                                                                               \
    (float* dqkv, const float* dmerged, const float* qkv, const float* weights, const float* cos, const float* sin, \
     float scale, int64_t B, int64_t T, int64_t H, int64_t d, bool accumulate, float* scratch, int threads))       \
  /* adamw.h */                                                                                                    \
  X(adamw_update, void,                                                                                            \
    (float* param, float* exp_avg, float* exp_avg_sq, const float* grad, int64_t n, const AdamWStep& s))           \
  /* packed_linear.h: y[rows, ldy] (+)= x[rows, ldx] panel + bias for one panel [in, ld], writing the first        \
     `valid` (1..64) columns; reads each panel row and bias up to valid rounded up to 8. */                        \
  X(matvec_panel, void,                                                                                            \
    (float* y, int64_t ldy, const float* x, int64_t ldx, int64_t rows, const float* panel, int64_t ld,             \
     const float* bias, int64_t in, int64_t valid, bool accumulate))

template <CpuVariant Variant>
struct CpuKernels {
#define MG_DECLARE_KERNEL(name, result, parameters) static result name parameters;
  MG_CPU_KERNELS(MG_DECLARE_KERNEL)
#undef MG_DECLARE_KERNEL
};

// One variant's kernels, as function pointers.
struct CpuKernelTable {
  CpuVariant variant = CpuVariant::baseline;
#define MG_KERNEL_FIELD(name, result, parameters) result(*name) parameters = nullptr;
  MG_CPU_KERNELS(MG_KERNEL_FIELD)
#undef MG_KERNEL_FIELD
};

// The table of the variant in use (cpu_variant()).
const CpuKernelTable& cpu_kernels();

}  // namespace mg
