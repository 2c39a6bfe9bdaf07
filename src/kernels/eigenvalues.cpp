#include "kernels/eigenvalues.h"

#include <algorithm>
#include <vector>

#include "core/error.h"
#include "kernels/parallel.h"

extern "C" void dgeev_(const char* jobvl, const char* jobvr, const int* n, double* a, const int* lda, double* wr,
                       double* wi, double* vl, const int* ldvl, double* vr, const int* ldvr, double* work,
                       const int* lwork, int* info);

namespace mg {

void eigenvalues(double* real, double* imag, const double* m, int64_t n) {
  // On one thread: dgeev's products are OpenBLAS's, which cut a product by the thread count
  // and changed its sums with it (kernels/gemm.h); from n = 128 on, the eigenvalues of the
  // same matrix came out in other last bits on 2 threads than on 1 (measured on the
  // Prescott, Haswell and SkylakeX cores). The matrices are a head's d x d.
  OneThreadScope one_thread;
  // dgeev reads column-major: it sees M^T, whose eigenvalues are M's.
  std::vector<double> a(m, m + n * n);
  const int N = static_cast<int>(n), one = 1;
  int info = 0, lwork = -1;
  double query = 0.0, unused = 0.0;
  dgeev_("N", "N", &N, a.data(), &N, real, imag, &unused, &one, &unused, &one, &query, &lwork, &info);
  lwork = static_cast<int>(query);
  std::vector<double> work(static_cast<size_t>(std::max(lwork, 1)));
  dgeev_("N", "N", &N, a.data(), &N, real, imag, &unused, &one, &unused, &one, work.data(), &lwork, &info);
  MG_CHECK(info == 0, "dgeev did not converge");
}

}  // namespace mg
