// The kernels compiled once per CPU variant (kernels/cpu_variant.h), and the table that
// picks one variant's copies at run time. This is the one place a CPU variant is chosen.
//
// CpuKernels<V> declares every such kernel once. Each file of kernels/cpu/ defines them
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

template <CpuVariant Variant>
struct CpuKernels {
  // gelu.h
  static void gelu_forward(float* out, const float* x, int64_t n);
  static void gelu_forward_with_slope(float* out, float* slope, const float* x, int64_t n);
  static void gelu_backward(float* dx, const float* dout, const float* x, int64_t n);
  static void gelu_backward_overwrite(float* dx, const float* dout, const float* x, int64_t n);

  // softmax.h; softmax_backward_rows: dscores (+)= scale * w * (dw - <w, dw>) per row.
  static void causal_softmax_forward(float* weights, const float* scores, int64_t batch, int64_t Tq, int64_t Tk);
  static void softmax_backward_rows(float* dscores, const float* dweights, const float* weights, int64_t batch,
                                    int64_t Tq, int64_t Tk, float scale, bool accumulate);

  // layernorm.h. The backward sums dweight, dbias per fixed block of rows into
  // partials [blocks, D] (zero on entry) that the caller adds in block order.
  static void layernorm_forward(float* out, float* mean, float* rstd, const float* x, const float* weight,
                                const float* bias, int64_t rows, int64_t D, float eps);
  static void layernorm_backward_blocks(float* dx, float* dweight_part, float* dbias_part, const float* dout,
                                        const float* x, const float* weight, const float* mean, const float* rstd,
                                        int64_t rows, int64_t D, int64_t row_block);
  // One row, no threads: the decoder's per-position LayerNorm.
  static void layernorm_row(float* out, const float* x, const float* weight, const float* bias, int64_t D,
                            float eps);

  // rope.h: cos, sin [positions, d/2] rows of the table, starting at position offset.
  static void rope_rotate(float* out, const float* x, const float* cos, const float* sin, int64_t rows, int64_t T,
                          int64_t d, bool inverse, bool accumulate);
  // rope.h's relayout_qkv; cos, sin [T, d/2] from position offset on, or null.
  static void relayout_qkv(float* out, const float* in, const float* cos, const float* sin, int64_t B, int64_t T,
                           int64_t H, int64_t d, bool to_heads);

  // cross_entropy.h: row_loss [rows] in double, summed by the caller in row order.
  static void cross_entropy_rows(double* row_loss, float* probs, const float* logits, const int32_t* targets,
                                 int64_t rows, int64_t V);
  static void cross_entropy_backward(float* dlogits, const float* probs, const int32_t* targets, int64_t rows,
                                     int64_t V, float dloss);

  // attention.h. cos, sin: the RoPE table's cos_pairs, sin_pairs [T, d] or null; scratch holds threads x attention_scratch_floats.
  static int64_t attention_scratch_floats(int64_t T, int64_t d);
  static void causal_attention_forward(float* merged, float* weights, const float* qkv, const float* cos,
                                       const float* sin, float scale, int64_t B, int64_t T, int64_t H, int64_t d,
                                       float* scratch, int threads);
  static void causal_attention_backward(float* dqkv, const float* dmerged, const float* qkv, const float* weights,
                                        const float* cos, const float* sin, float scale, int64_t B, int64_t T,
                                        int64_t H, int64_t d, bool accumulate, float* scratch, int threads);

  // adamw.h
  static void adamw_update(float* param, float* exp_avg, float* exp_avg_sq, const float* grad, int64_t n,
                           const AdamWStep& s);

  // packed_linear.h: y[rows, ldy] (+)= x[rows, ldx] panel + bias for one panel [in, ld],
  // writing the first `valid` (1..64) columns; reads each panel row and bias up to valid
  // rounded up to 8.
  static void matvec_panel(float* y, int64_t ldy, const float* x, int64_t ldx, int64_t rows, const float* panel,
                           int64_t ld, const float* bias, int64_t in, int64_t valid, bool accumulate);
};

// One variant's kernels, as function pointers.
struct CpuKernelTable {
  CpuVariant variant;
  decltype(&CpuKernels<CpuVariant::baseline>::gelu_forward) gelu_forward;
  decltype(&CpuKernels<CpuVariant::baseline>::gelu_forward_with_slope) gelu_forward_with_slope;
  decltype(&CpuKernels<CpuVariant::baseline>::gelu_backward) gelu_backward;
  decltype(&CpuKernels<CpuVariant::baseline>::gelu_backward_overwrite) gelu_backward_overwrite;
  decltype(&CpuKernels<CpuVariant::baseline>::causal_softmax_forward) causal_softmax_forward;
  decltype(&CpuKernels<CpuVariant::baseline>::softmax_backward_rows) softmax_backward_rows;
  decltype(&CpuKernels<CpuVariant::baseline>::layernorm_forward) layernorm_forward;
  decltype(&CpuKernels<CpuVariant::baseline>::layernorm_backward_blocks) layernorm_backward_blocks;
  decltype(&CpuKernels<CpuVariant::baseline>::layernorm_row) layernorm_row;
  decltype(&CpuKernels<CpuVariant::baseline>::rope_rotate) rope_rotate;
  decltype(&CpuKernels<CpuVariant::baseline>::relayout_qkv) relayout_qkv;
  decltype(&CpuKernels<CpuVariant::baseline>::cross_entropy_rows) cross_entropy_rows;
  decltype(&CpuKernels<CpuVariant::baseline>::cross_entropy_backward) cross_entropy_backward;
  decltype(&CpuKernels<CpuVariant::baseline>::attention_scratch_floats) attention_scratch_floats;
  decltype(&CpuKernels<CpuVariant::baseline>::causal_attention_forward) causal_attention_forward;
  decltype(&CpuKernels<CpuVariant::baseline>::causal_attention_backward) causal_attention_backward;
  decltype(&CpuKernels<CpuVariant::baseline>::adamw_update) adamw_update;
  decltype(&CpuKernels<CpuVariant::baseline>::matvec_panel) matvec_panel;
};

// The table of the variant in use (cpu_variant()).
const CpuKernelTable& cpu_kernels();

}  // namespace mg
