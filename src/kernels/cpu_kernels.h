// The kernels compiled once per CPU variant (kernels/cpu_variant.h), declared once.
//
// MG_CPU_KERNELS lists every such kernel: X(family, name, result, (parameters), (arguments)).
// From that one list come
//   - the public entry point `mg::name` declared below, which callers call; it is defined in
//     kernels/cpu_dispatch.cpp as one call through the active variant's table, timed for the
//     profile (kernels/profile.h) under the op family the list names;
//   - CpuKernels<V>::name, the variant's copy, which each file of kernels/cpu/ defines for
//     the variant its build names (MG_CPU_VARIANT, set by CMakeLists.txt);
//   - CpuKernelTable's field and each variant's table (kernels/cpu_variant.cpp).
// A new kernel is one line here and its body in kernels/cpu/. The topic headers (gelu.h,
// softmax.h, layernorm.h, rope.h, fused_attention.h, cross_entropy.h, optimizer.h) say what each
// computes and add the entry points that need more than one call: argument checks, scratch
// buffers held in std::vector, sums in row order (kernels/cpu_dispatch.cpp).
//
// The files of kernels/cpu/ use no std:: containers or other out-of-line templates: an
// inline function emitted by a -march=x86-64-v4 object could be picked by the linker for
// baseline callers too (tests/cpu_objects_test.sh checks).
#pragma once

#include <cstdint>

#include "kernels/cpu_variant.h"

namespace mg {

struct AdamWStep;  // kernels/optimizer.h

// Shapes row-major, as named; "(+)=" adds when accumulate, else writes.
#define MG_CPU_KERNELS(X)                                                                                            \
  /* gelu.h: out = x Phi(x); with_slope also writes slope = Phi(x) + x phi(x) (may alias x);                         \
     backward: dx (+)= dout * slope(x). */                                                                           \
  X(gelu, gelu_forward, void, (float* out, const float* x, int64_t n), (out, x, n))                                  \
  X(gelu, gelu_forward_with_slope, void, (float* out, float* slope, const float* x, int64_t n), (out, slope, x, n))  \
  X(gelu, gelu_backward, void, (float* dx, const float* dout, const float* x, int64_t n, bool accumulate),           \
    (dx, dout, x, n, accumulate))                                                                                    \
  /* softmax.h: weights, scores [batch, Tq, Tk], Tq <= Tk; the backward of w = causal_softmax(scale * s):            \
     dscores (+)= scale * w * (dw - <w, dw>) per row. */                                                             \
  X(softmax, causal_softmax_forward, void,                                                                           \
    (float* weights, const float* scores, int64_t batch, int64_t Tq, int64_t Tk), (weights, scores, batch, Tq, Tk))  \
  X(softmax, causal_softmax_backward, void,                                                                          \
    (float* dscores, const float* dweights, const float* weights, int64_t batch, int64_t Tq, int64_t Tk,             \
     float scale, bool accumulate),                                                                                  \
    (dscores, dweights, weights, batch, Tq, Tk, scale, accumulate))                                                  \
  /* layernorm.h: x, out [rows,D]; mean, rstd [rows]. The backward sums dweight, dbias per fixed block of rows       \
     into partials [blocks, D] (zero on entry) that layernorm_backward adds in block order; layernorm_row: one       \
     row, no threads (the decoder's). */                                                                             \
  X(layernorm, layernorm_forward, void,                                                                              \
    (float* out, float* mean, float* rstd, const float* x, const float* weight, const float* bias, int64_t rows,     \
     int64_t D, float eps),                                                                                          \
    (out, mean, rstd, x, weight, bias, rows, D, eps))                                                                \
  X(layernorm, layernorm_backward_blocks, void,                                                                      \
    (float* dx, float* dweight_part, float* dbias_part, const float* dout, const float* x, const float* weight,      \
     const float* mean, const float* rstd, int64_t rows, int64_t D, int64_t row_block),                              \
    (dx, dweight_part, dbias_part, dout, x, weight, mean, rstd, rows, D, row_block))                                 \
  X(layernorm, layernorm_row, void,                                                                                  \
    (float* out, const float* x, const float* weight, const float* bias, int64_t D, float eps),                      \
    (out, x, weight, bias, D, eps))                                                                                  \
  /* rope.h: x, out [rows, T, d]; cos, sin [T, d/2], the table's rows from the first position on (rope_forward,      \
     rope_backward, rope_shift pick them); relayout_qkv_cos_sin: relayout_qkv's, cos and sin the same or null. */    \
  X(attention, rope_rotate, void,                                                                                    \
    (float* out, const float* x, const float* cos, const float* sin, int64_t rows, int64_t T, int64_t d,             \
     bool inverse, bool accumulate),                                                                                 \
    (out, x, cos, sin, rows, T, d, inverse, accumulate))                                                             \
  X(attention, relayout_qkv_cos_sin, void,                                                                           \
    (float* out, const float* in, const float* cos, const float* sin, int64_t B, int64_t T, int64_t H, int64_t d,    \
     bool to_heads),                                                                                                 \
    (out, in, cos, sin, B, T, H, d, to_heads))                                                                       \
  /* cross_entropy.h: logits, probs [rows,V]; row_loss [rows] in double, summed by cross_entropy_forward in row      \
     order; the backward: dlogits += dloss / rows * (probs - onehot(target)). */                                     \
  X(loss, cross_entropy_rows, void,                                                                                  \
    (double* row_loss, float* probs, const float* logits, const int32_t* targets, int64_t rows, int64_t V),          \
    (row_loss, probs, logits, targets, rows, V))                                                                     \
  X(loss, cross_entropy_backward, void,                                                                              \
    (float* dlogits, const float* probs, const int32_t* targets, int64_t rows, int64_t V, float dloss),              \
    (dlogits, probs, targets, rows, V, dloss))                                                                       \
  /* fused_attention.h: the fused attention of every head (its contract there), called with an                       \
     attention_workspace: cos, sin the RoPE table's cos_pairs, sin_pairs [T, d] or null; scratch holds threads x     \
     attention_scratch_floats (a size query: no time of its own, charged to other). */                               \
  X(other, attention_scratch_floats, int64_t, (int64_t T, int64_t d), (T, d))                                        \
  X(attention, attention_heads_forward, void,                                                                        \
    (float* merged, float* weights, const float* qkv, const float* cos, const float* sin, float scale, int64_t B,    \
     int64_t T, int64_t H, int64_t d, float* scratch, int threads),                                                  \
    (merged, weights, qkv, cos, sin, scale, B, T, H, d, scratch, threads))                                           \
  X(attention, attention_heads_backward, void,                                                                       \
    (float* dqkv, const float* dmerged, const float* qkv, const float* weights, const float* cos, const float* sin,  \
     float scale, int64_t B, int64_t T, int64_t H, int64_t d, bool accumulate, float* scratch, int threads),         \
    (dqkv, dmerged, qkv, weights, cos, sin, scale, B, T, H, d, accumulate, scratch, threads))                        \
  /* optimizer.h: one tensor's AdamW update, in place (optim/adamw.h has the math). */                               \
  X(optimizer, adamw_update, void,                                                                                   \
    (float* param, float* exp_avg, float* exp_avg_sq, const float* grad, int64_t n, const AdamWStep& s),             \
    (param, exp_avg, exp_avg_sq, grad, n, s))                                                                        \
  /* packed_linear.h: y[rows, ldy] (+)= x[rows, ldx] panel + bias for one panel [in, ld], writing the first          \
     `valid` (1..64) columns; reads each panel row and bias up to valid rounded up to 8. */                          \
  X(gemm, matvec_panel, void,                                                                                        \
    (float* y, int64_t ldy, const float* x, int64_t ldx, int64_t rows, const float* panel, int64_t ld,               \
     const float* bias, int64_t in, int64_t valid, bool accumulate),                                                 \
    (y, ldy, x, ldx, rows, panel, ld, bias, in, valid, accumulate))

// The public entry points: mg::gelu_forward(...) and so on, for the variant in use.
#define MG_DECLARE_ENTRY(family, name, result, parameters, arguments) result name parameters;
MG_CPU_KERNELS(MG_DECLARE_ENTRY)
#undef MG_DECLARE_ENTRY

// One variant's copies.
template <CpuVariant Variant>
struct CpuKernels {
#define MG_DECLARE_KERNEL(family, name, result, parameters, arguments) static result name parameters;
  MG_CPU_KERNELS(MG_DECLARE_KERNEL)
#undef MG_DECLARE_KERNEL
};

// One variant's kernels, as function pointers.
struct CpuKernelTable {
  CpuVariant variant = CpuVariant::baseline;
#define MG_KERNEL_FIELD(family, name, result, parameters, arguments) result(*name) parameters = nullptr;
  MG_CPU_KERNELS(MG_KERNEL_FIELD)
#undef MG_KERNEL_FIELD
};

// The table of the variant in use (cpu_variant()).
const CpuKernelTable& cpu_kernels();

}  // namespace mg
