// Plain C++ GEMM: the definition the fast backends are tested against. Accumulates in
// double so its own rounding never hides a fast backend's error.
#include <vector>

#include "core/error.h"
#include "kernels/gemm.h"
#include "kernels/parallel.h"

namespace mg {

void gemm_reference(const GemmArgs& g) {
  check_gemm_epilogue(g);
  for (int64_t b = 0; b < g.batch; ++b) {
    const float* A = g.A + b * g.stride_a;
    const float* B = g.B + b * g.stride_b;
    float* C = g.C + b * g.stride_c;
    for (int64_t i = 0; i < g.M; ++i) {
      for (int64_t j = 0; j < g.N; ++j) {
        double acc = 0.0;
        for (int64_t k = 0; k < g.K; ++k) {
          float a = g.trans_a ? A[k * g.lda + i] : A[i * g.lda + k];
          float bv = g.trans_b ? B[j * g.ldb + k] : B[k * g.ldb + j];
          acc += static_cast<double>(a) * bv;
        }
        float& c = C[i * g.ldc + j];
        double result = g.alpha * acc + (g.beta == 0.0f ? 0.0 : g.beta * static_cast<double>(c));
        if (g.bias) result += g.bias[j];
        if (g.addend) result += g.addend[i * g.ldc + j];
        if (g.multiplier) result *= g.multiplier[i * g.ldc + j];
        c = static_cast<float>(result);
      }
    }
  }
}

void check_gemm_epilogue(const GemmArgs& g) {
  if (!g.bias && !g.addend && !g.multiplier) return;
  MG_CHECK(g.batch == 1, "gemm: an epilogue needs a 2-D product (batch 1)");
  MG_CHECK(!g.bias || g.alpha == 1.0f, "gemm: a bias needs alpha = 1");
  MG_CHECK(!g.multiplier || g.beta == 0.0f, "gemm: a multiplier needs beta = 0");
}

namespace {

// Row i of C [M,N] gets the epilogue: + bias [N], + addend's row, * multiplier's row.
void apply_gemm_epilogue_row(const GemmArgs& g, int64_t i) {
  float* c = g.C + i * g.ldc;
  if (g.bias)
    for (int64_t j = 0; j < g.N; ++j) c[j] += g.bias[j];
  if (g.addend)
    for (int64_t j = 0; j < g.N; ++j) c[j] += g.addend[i * g.ldc + j];
  if (g.multiplier)
    for (int64_t j = 0; j < g.N; ++j) c[j] *= g.multiplier[i * g.ldc + j];
}

}  // namespace

void apply_gemm_epilogue(const GemmArgs& g) {
  if (!g.bias && !g.addend && !g.multiplier) return;
#pragma omp parallel for if (g.M * g.N > kParallelWork)
  for (int64_t i = 0; i < g.M; ++i) apply_gemm_epilogue_row(g, i);
}

void apply_gemm_epilogue_one_thread(const GemmArgs& g) {
  if (!g.bias && !g.addend && !g.multiplier) return;
  for (int64_t i = 0; i < g.M; ++i) apply_gemm_epilogue_row(g, i);
}

GemmArgs tight_gemm_args(GemmTranspose transpose, int64_t M, int64_t N, int64_t K, int64_t batch) {
  GemmArgs g;
  g.trans_a = transpose.trans_a;
  g.trans_b = transpose.trans_b;
  g.M = M;
  g.N = N;
  g.K = K;
  g.lda = g.trans_a ? M : K;
  g.ldb = g.trans_b ? K : N;
  g.ldc = N;
  g.batch = batch;
  g.stride_a = M * K;
  g.stride_b = K * N;
  g.stride_c = M * N;
  return g;
}

void matmul_2d(const float* A, const float* B, float* C, int64_t M, int64_t N, int64_t K, GemmTranspose transpose,
               float beta, float alpha) {
  GemmArgs g = tight_gemm_args(transpose, M, N, K);
  g.alpha = alpha;
  g.A = A;
  g.B = B;
  g.beta = beta;
  g.C = C;
  gemm(g);
}

}  // namespace mg
