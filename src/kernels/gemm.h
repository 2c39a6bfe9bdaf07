// General matrix multiply, row-major, in three interchangeable backends:
//   C[M,N] = (alpha * op(A)[M,K] @ op(B)[K,N] + beta * C + bias + addend) * multiplier
// op(X) is X or X^T. Leading dimensions are row strides in elements. beta = 0 means C
// is write-only (its old contents, even NaN, are ignored). bias, addend and multiplier
// are the epilogue: each optional, applied to C's elements on the way out of the product
// (oneDNN fuses them as the matmul's bias and post-ops), so a linear layer's bias, a
// residual sum or an element-wise factor costs no pass of its own. Kernels know no graph.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "kernels/cpu_variant.h"
#include "kernels/runtime.h"

namespace mg {

struct GemmArgs {
  bool trans_a = false, trans_b = false;
  int64_t M = 0, N = 0, K = 0;
  float alpha = 1.0f;
  const float* A = nullptr;
  int64_t lda = 0;
  const float* B = nullptr;
  int64_t ldb = 0;
  float beta = 0.0f;
  float* C = nullptr;
  int64_t ldc = 0;
  // Batched form: `batch` independent products, operand i at X + i * stride_x.
  int64_t batch = 1;
  int64_t stride_a = 0, stride_b = 0, stride_c = 0;
  // The epilogue, for 2-D products (batch 1): bias [N] added to every row (alpha must be 1);
  // addend [M,N] added (a residual stream); multiplier [M,N] multiplying the result (beta
  // must be 0). addend and multiplier have C's leading dimension ldc.
  const float* bias = nullptr;
  const float* addend = nullptr;
  const float* multiplier = nullptr;
};

// Runs on the backend in force (set_gemm_backend). On oneDNN a product whose inner
// dimension K is longer than kGemmKChunk, and on OpenBLAS every product, goes through
// gemm_split (below), so that every product's bits are the same on any thread count.
void gemm(const GemmArgs& args);

// Each backend on its own, for tests and benchmarks. gemm_openblas is gemm_split over
// gemm_openblas_one_thread: OpenBLAS never threads a product itself (gemm_split says why).
void gemm_reference(const GemmArgs& args);
void gemm_openblas(const GemmArgs& args);
void gemm_onednn(const GemmArgs& args);

// A product on the calling thread alone, safe to call from several threads at once (the
// tiles of gemm_split): its primitive is made for one thread, and each thread binds its own
// memory objects, stream and scratchpad. 2-D only (batch 1).
void gemm_onednn_one_thread(const GemmArgs& args);
// The same on OpenBLAS: one cblas_sgemm on the calling thread (OpenBLAS's OpenMP build runs
// single-threaded inside a parallel region or when OpenMP allows one thread), then the
// epilogue on the same thread. 2-D only (batch 1).
void gemm_openblas_one_thread(const GemmArgs& args);

// The sums of a product in an order fixed by its shape, whatever the thread count
// (gemm_split.cpp). The libraries' own threading changes them:
//   - oneDNN 2.6's matmul cuts K across its threads for a transposed A from K = 2048 on
//     (measured at 2, 4 and 8 threads), so the weight gradients dW = dY^T X (K = B*T = 2048
//     rows) came out in other last bits on 2 threads than on 1;
//   - OpenBLAS 0.3.21 cuts M and N across its threads, and on its Haswell and Zen kernels
//     (every AVX2-only CPU; AMD Zen too) the sums of a C element depend on where a cut falls:
//     its sgemm kernel (sgemm_kernel_8x4_haswell_2.c) sums some tiles of C in one
//     accumulator and others in two, even and odd k, added at the end. Every product of the
//     model changed in 2 threads against 1 there (and most of them on Prescott and
//     Nehalem in 3 against 1); on every core, a K between GEMM_Q and 2 GEMM_Q is cut in
//     two halves by its threaded driver (level3_thread.c, (K+1)/2) but rounded to
//     GEMM_UNROLL_M by its one-thread driver (level3.c), which changed products with such
//     a K on SkylakeX and Cooperlake too (measured per core, docs/performance.md,
//     "Reproducible on any thread count").
// So a product is cut into tiles fixed by its shape alone, each computed by `one_thread`
// (which applies alpha, beta and the epilogue it is given) on one thread:
//   batch 1, K > kGemmKChunk: K in chunks of kGemmKChunk, C's rows in blocks of
//            kGemmRowBlock; a tile is one chunk of one row block, written to its own
//            partial [rows, N]; then every element of C is its chunks' partials added in
//            chunk order, with alpha, beta and the epilogue applied after;
//   batch 1, K <= kGemmKChunk: a tile is a block of kGemmRowBlock rows of C, its K whole,
//            written in place with alpha, beta and the epilogue (OpenBLAS only: oneDNN's
//            own threads keep such a product's bits, below);
//   batch > 1: a tile is one entry, its K whole.
// The tiles are shared out over the threads (a static schedule), so a thread count changes
// which thread computes a tile, never what it computes. 512 is the K block of oneDNN's own
// one-thread weight gradients on AVX-512 (brgemm): there the chunks' sum is bit for bit what
// one thread computed before this split (configs/default.json's run is the one-thread run
// it was). oneDNN kept a K <= kGemmKChunk whole (measured at 2, 3, 4 and 8 threads up to
// 2047 with A transposed, 8192 without; its sgemm of older ISAs cuts K only past 512, by its
// source), so on oneDNN such a product is left to the library.
inline constexpr int64_t kGemmKChunk = 512;
inline constexpr int64_t kGemmRowBlock = 256;
void gemm_split(const GemmArgs& args, void (*one_thread)(const GemmArgs&));

// The kernel set OpenBLAS chose when it loaded ("SkylakeX", "Haswell", "Prescott", ...):
// OPENBLAS_CORETYPE's, or else its own detection's, which knows only CPUs as old as itself.
std::string openblas_core();

// The OPENBLAS_CORETYPE worth setting when OpenBLAS's `core` has no AVX2 while this CPU
// runs our `best` variant: "SkylakeX" where that is avx512, "Haswell" where avx2. Empty
// when `core` is AVX2 or wider (Haswell, Zen, SkylakeX, Cooperlake, SapphireRapids) or the
// CPU has only the baseline. Debian 12's OpenBLAS 0.3.21 takes an Emerald Rapids Xeon
// (family 6, model 207) for a Prescott: SSE3 kernels, some five times slower than SkylakeX's
// (docs/performance.md, "Backends").
std::string openblas_core_to_set(std::string_view core, CpuVariant best);

// Throws (MG_CHECK) when the epilogue breaks the rules above.
void check_gemm_epilogue(const GemmArgs& args);

// The epilogue applied to C in place, after a product that ran without it (the OpenBLAS
// backend, which has none of its own); the rows split over the threads when there are many.
void apply_gemm_epilogue(const GemmArgs& args);
// The same on the calling thread alone (a tile of gemm_split).
void apply_gemm_epilogue_one_thread(const GemmArgs& args);

// Which operands are stored transposed, named at each call: {.trans_b = true} is A B^T,
// {} is A B.
struct GemmTranspose {
  bool trans_a = false, trans_b = false;
};

// Arguments for tight row-major operands laid out one after another: leading dimensions
// from the stored layouts (A [M,K] or [K,M], B [K,N] or [N,K], C [M,N]) and batch strides
// M*K, K*N, M*N. Pointers, alpha and beta are left for the caller.
GemmArgs tight_gemm_args(GemmTranspose transpose, int64_t M, int64_t N, int64_t K, int64_t batch = 1);

// Convenience for the dense cases: row-major, tight leading dimensions.
//   C[M,N] (+)= op(A) op(B), A is [M,K] or [K,M] (trans_a), B is [K,N] or [N,K] (trans_b).
void matmul_2d(const float* A, const float* B, float* C, int64_t M, int64_t N, int64_t K, GemmTranspose transpose,
               float beta = 0.0f, float alpha = 1.0f);

}  // namespace mg
