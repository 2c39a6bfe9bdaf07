// OpenBLAS backend: cblas_sgemm, one call per batch entry (OpenBLAS 0.3.21 has no
// strided-batched sgemm in its CBLAS interface).
#include <cblas.h>

#include "kernels/gemm.h"

namespace mg {

void gemm_openblas(const GemmArgs& g) {
  if (g.M == 0 || g.N == 0) return;
  for (int64_t b = 0; b < g.batch; ++b) {
    cblas_sgemm(CblasRowMajor, g.trans_a ? CblasTrans : CblasNoTrans, g.trans_b ? CblasTrans : CblasNoTrans,
                static_cast<blasint>(g.M), static_cast<blasint>(g.N), static_cast<blasint>(g.K), g.alpha,
                g.A + b * g.stride_a, static_cast<blasint>(g.lda), g.B + b * g.stride_b,
                static_cast<blasint>(g.ldb), g.beta, g.C + b * g.stride_c, static_cast<blasint>(g.ldc));
  }
}

}  // namespace mg
