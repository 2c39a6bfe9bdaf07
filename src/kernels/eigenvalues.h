// Eigenvalues of a small dense matrix, on LAPACK (OpenBLAS's dgeev): the one LAPACK call of
// mini-gpt, kept here so that the layers above call no library directly.
#pragma once

#include <cstdint>

namespace mg {

// real [n], imag [n] = the eigenvalues of the row-major n x n matrix m (unordered; complex
// ones in conjugate pairs). InternalError when LAPACK does not converge.
void eigenvalues(double* real, double* imag, const double* m, int64_t n);

}  // namespace mg
