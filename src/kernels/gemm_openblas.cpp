// OpenBLAS backend: cblas_sgemm on the calling thread, one call per tile of gemm_split
// (kernels/gemm.h): a product's rows in blocks, a long K in chunks, a batch's entries one
// by one (OpenBLAS 0.3.21 has no strided-batched sgemm in its CBLAS interface), the tiles
// shared out over our OpenMP pool. OpenBLAS's own threads cut a product by the thread
// count, and on its Haswell and Zen kernels that changed the sums (gemm.h says how), so it
// never threads a product here: its OpenMP build runs single-threaded inside a parallel
// region and where OpenMP allows one thread.
#include <cblas.h>
#include <omp.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <optional>

#include "core/error.h"
#include "kernels/gemm.h"
#include "kernels/parallel.h"

namespace mg {
namespace {

void sgemm(const GemmArgs& g) {
  cblas_sgemm(CblasRowMajor, g.trans_a ? CblasTrans : CblasNoTrans, g.trans_b ? CblasTrans : CblasNoTrans,
              static_cast<blasint>(g.M), static_cast<blasint>(g.N), static_cast<blasint>(g.K), g.alpha, g.A,
              static_cast<blasint>(g.lda), g.B, static_cast<blasint>(g.ldb), g.beta, g.C, static_cast<blasint>(g.ldc));
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

void gemm_openblas_one_thread(const GemmArgs& g) {
  MG_CHECK(g.M >= 0 && g.N >= 0 && g.K >= 0 && g.batch == 1, "gemm_openblas_one_thread: a 2-D product");
  check_gemm_epilogue(g);
  if (g.M == 0 || g.N == 0) return;
  // Outside a parallel region OpenBLAS would thread a large product over omp_get_max_threads().
  std::optional<OneThreadScope> one_thread;
  if (!omp_in_parallel()) one_thread.emplace();
  sgemm(g);
  apply_gemm_epilogue_one_thread(g);
}

void gemm_openblas(const GemmArgs& g) { gemm_split(g, gemm_openblas_one_thread); }

}  // namespace mg
