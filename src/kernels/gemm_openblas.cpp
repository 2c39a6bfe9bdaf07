// OpenBLAS backend: cblas_sgemm, one call per batch entry (OpenBLAS 0.3.21 has no
// strided-batched sgemm in its CBLAS interface). A batch of small products (the attention
// heads, 64 x [64,32]x[32,64]) is split over the OpenMP pool one entry per thread: each
// product is too small for OpenBLAS to thread well by itself, and the OpenMP build of
// OpenBLAS runs single-threaded inside a parallel region, so the pool is not oversubscribed.
#include <cblas.h>
#include <omp.h>

#include <algorithm>
#include <array>
#include <cctype>

#include "kernels/gemm.h"

namespace mg {
namespace {

// Below this many multiply-adds per entry, threads go to entries rather than into one product.
constexpr int64_t kSmallProduct = 128 * 128 * 128;

void sgemm_entry(const GemmArgs& g, int64_t b) {
  cblas_sgemm(CblasRowMajor, g.trans_a ? CblasTrans : CblasNoTrans, g.trans_b ? CblasTrans : CblasNoTrans,
              static_cast<blasint>(g.M), static_cast<blasint>(g.N), static_cast<blasint>(g.K), g.alpha,
              g.A + b * g.stride_a, static_cast<blasint>(g.lda), g.B + b * g.stride_b, static_cast<blasint>(g.ldb),
              g.beta, g.C + b * g.stride_c, static_cast<blasint>(g.ldc));
}

bool same_name(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

}  // namespace

std::string openblas_core() {
  const char* name = openblas_get_corename();
  return name ? name : "";
}

std::string openblas_core_to_set(std::string_view core, CpuVariant best) {
  constexpr std::array<std::string_view, 5> kAvx2OrWider = {"Haswell", "Zen", "SkylakeX", "Cooperlake",
                                                            "SapphireRapids"};
  if (best == CpuVariant::baseline) return "";
  if (std::any_of(kAvx2OrWider.begin(), kAvx2OrWider.end(), [&](std::string_view c) { return same_name(c, core); }))
    return "";
  return best == CpuVariant::avx512 ? "SkylakeX" : "Haswell";
}

void gemm_openblas(const GemmArgs& g) {
  check_gemm_epilogue(g);
  if (g.M == 0 || g.N == 0) return;
  // Entries may run at once only if their C blocks are disjoint.
  const bool disjoint_c = g.stride_c >= (g.M - 1) * g.ldc + g.N;
  const bool by_entry = g.batch > 1 && disjoint_c && g.M * g.N * g.K < kSmallProduct;
  // Otherwise OpenBLAS threads each product itself, called from outside any parallel
  // region. A region with a false `if` clause is still a region (a team of one): OpenBLAS's
  // own region inside it is then nested, and libgomp starts a new thread for it on every
  // call, which spins against the pool's worker: at 2 threads --backend openblas then
  // trained several times slower than at 1 (docs/performance.md, "Backends").
  if (by_entry && omp_get_max_threads() > 1) {
#pragma omp parallel for schedule(static)
    for (int64_t b = 0; b < g.batch; ++b) sgemm_entry(g, b);
  } else {
    for (int64_t b = 0; b < g.batch; ++b) sgemm_entry(g, b);
  }
  apply_gemm_epilogue(g);
}

}  // namespace mg
