// The oneDNN LayerNorm forward and GELU kernels, held against double-precision formulas
// written here, then against the plain kernels on the model's shapes. An accumulating
// backward must add: every gradient buffer starts non-zero.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "kernels/gelu.h"
#include "kernels/gemm.h"
#include "kernels/layernorm.h"
#include "kernels/onednn_ops.h"
#include "kernels/parallel.h"
#include "kernels/runtime.h"
#include "kernels/softmax.h"
#include "core/random.h"

namespace mg {
namespace {

std::vector<float> uniform(Rng& rng, int64_t n, double lo, double hi) {
  std::vector<float> v(n);
  for (float& x : v) x = static_cast<float>(lo + (hi - lo) * rng.uniform());
  return v;
}

// Every |a - b| <= abs_tol + rel_tol * |b|, reporting the first miss.
void expect_close(const std::vector<float>& a, const std::vector<double>& b, double abs_tol, double rel_tol,
                  const char* what) {
  ASSERT_EQ(a.size(), b.size());
  int64_t bad = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    double tol = abs_tol + rel_tol * std::fabs(b[i]);
    if (!(std::fabs(a[i] - b[i]) <= tol) && bad++ == 0)
      ADD_FAILURE() << what << "[" << i << "] = " << a[i] << ", expected " << b[i] << " +- " << tol;
  }
  EXPECT_EQ(bad, 0) << what << ": elements out of tolerance";
}

std::vector<double> as_double(const std::vector<float>& v) { return {v.begin(), v.end()}; }

// ---- LayerNorm ---------------------------------------------------------------------

// Double forward: out, and per row mean and rstd = 1/sqrt(biased var + eps).
void layernorm_double(std::vector<double>& out, std::vector<double>& mean, std::vector<double>& rstd,
                      const std::vector<double>& x, const std::vector<float>& weight, const std::vector<float>& bias,
                      int64_t rows, int64_t D, double eps) {
  out.assign(rows * D, 0.0);
  mean.assign(rows, 0.0);
  rstd.assign(rows, 0.0);
  for (int64_t r = 0; r < rows; ++r) {
    double m = 0.0, var = 0.0;
    for (int64_t j = 0; j < D; ++j) m += x[r * D + j] / D;
    for (int64_t j = 0; j < D; ++j) var += (x[r * D + j] - m) * (x[r * D + j] - m) / D;
    double s = 1.0 / std::sqrt(var + eps);
    for (int64_t j = 0; j < D; ++j)
      out[r * D + j] = (x[r * D + j] - m) * s * (weight.empty() ? 1.0 : weight[j]) + (bias.empty() ? 0.0 : bias[j]);
    mean[r] = m;
    rstd[r] = s;
  }
}

TEST(OnednnLayerNorm, ForwardMatchesDoubleFormulaOnModelShape) {
  // [2048,64], rows offset by 3 so a one-pass variance would lose digits.
  const int64_t rows = 2048, D = 64;
  const float eps = 1e-5f;
  Rng rng(1);
  std::vector<float> x = uniform(rng, rows * D, 1.0, 5.0), weight = uniform(rng, D, 0.5, 1.5),
                     bias = uniform(rng, D, -0.5, 0.5);
  std::vector<float> out(rows * D), mean(rows), rstd(rows);
  layernorm_forward_onednn(out.data(), mean.data(), rstd.data(), x.data(), weight.data(), bias.data(), rows, D, eps);
  std::vector<double> out_ref, mean_ref, rstd_ref;
  layernorm_double(out_ref, mean_ref, rstd_ref, as_double(x), weight, bias, rows, D, eps);
  // |xhat| <= sqrt(D) = 8, so 1e-5 absolute is ~100 float32 ulps of the largest output.
  expect_close(out, out_ref, 1e-5, 1e-5, "out");
  expect_close(mean, mean_ref, 0.0, 1e-6, "mean");
  expect_close(rstd, rstd_ref, 0.0, 1e-5, "rstd");
}

TEST(OnednnLayerNorm, ForwardWithoutWeightAndBiasIsPlainNormalization) {
  const int64_t rows = 5, D = 33;
  Rng rng(2);
  std::vector<float> x = uniform(rng, rows * D, -2.0, 2.0), out(rows * D), mean(rows), rstd(rows);
  layernorm_forward_onednn(out.data(), mean.data(), rstd.data(), x.data(), nullptr, nullptr, rows, D, 1e-5f);
  std::vector<double> out_ref, mean_ref, rstd_ref;
  layernorm_double(out_ref, mean_ref, rstd_ref, as_double(x), {}, {}, rows, D, 1e-5);
  expect_close(out, out_ref, 1e-5, 1e-5, "out");
}

TEST(OnednnLayerNorm, AgreesWithPlainKernelsOnModelShape) {
  const int64_t rows = 2048, D = 64;
  Rng rng(4);
  std::vector<float> x = uniform(rng, rows * D, -3.0, 3.0), weight = uniform(rng, D, 0.5, 1.5),
                     bias = uniform(rng, D, -0.5, 0.5), dout = uniform(rng, rows * D, -1.0, 1.0);
  std::vector<float> out(rows * D), mean(rows), rstd(rows), out_p(rows * D), mean_p(rows), rstd_p(rows);
  layernorm_forward_onednn(out.data(), mean.data(), rstd.data(), x.data(), weight.data(), bias.data(), rows, D, 1e-5f);
  layernorm_forward(out_p.data(), mean_p.data(), rstd_p.data(), x.data(), weight.data(), bias.data(), rows, D, 1e-5f);
  expect_close(out, as_double(out_p), 1e-5, 1e-5, "out");
  expect_close(rstd, as_double(rstd_p), 0.0, 1e-5, "rstd");
}

// ---- GELU --------------------------------------------------------------------------

double gelu_double(double x) { return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0))); }
double gelu_grad_double(double x) {
  return 0.5 * (1.0 + std::erf(x / std::sqrt(2.0))) + x * std::exp(-0.5 * x * x) / std::sqrt(2.0 * M_PI);
}

TEST(OnednnGelu, ForwardAndBackwardMatchDoubleErfFormula) {
  // A grid over [-8, 8] (tails included) plus random values, n not a multiple of the SIMD width.
  Rng rng(5);
  std::vector<float> x;
  for (int i = -800; i <= 800; ++i) x.push_back(i / 100.0f);
  for (float v : uniform(rng, 1001, -4.0, 4.0)) x.push_back(v);
  const int64_t n = static_cast<int64_t>(x.size());
  std::vector<float> out(n), dout = uniform(rng, n, -1.0, 1.0), dx = uniform(rng, n, -1.0, 1.0);
  std::vector<double> out_want(n), dx_want = as_double(dx);
  for (int64_t i = 0; i < n; ++i) {
    out_want[i] = gelu_double(x[i]);
    dx_want[i] += dout[i] * gelu_grad_double(x[i]);
  }
  gelu_forward_onednn(out.data(), x.data(), n);
  gelu_backward_onednn(dx.data(), dout.data(), x.data(), n, true);
  // oneDNN evaluates erf by a polynomial; 1e-6 absolute plus 1e-5 relative covers it.
  expect_close(out, out_want, 1e-6, 1e-5, "gelu");
  expect_close(dx, dx_want, 1e-6, 1e-5, "dx");
}

TEST(OnednnGelu, AgreesWithPlainKernelsOnModelShape) {
  const int64_t n = 2048 * 256;
  Rng rng(6);
  std::vector<float> x = uniform(rng, n, -5.0, 5.0), dout = uniform(rng, n, -1.0, 1.0);
  std::vector<float> out(n), out_p(n), dx(n, 0.25f), dx_p(n, 0.25f);
  gelu_forward_onednn(out.data(), x.data(), n);
  gelu_forward(out_p.data(), x.data(), n);
  gelu_backward_onednn(dx.data(), dout.data(), x.data(), n, true);
  gelu_backward(dx_p.data(), dout.data(), x.data(), n, true);
  expect_close(out, as_double(out_p), 2e-6, 1e-5, "gelu");
  expect_close(dx, as_double(dx_p), 2e-6, 1e-5, "dx");
}

// The overwriting backwards (used when the gradient buffer holds nothing yet) write what
// the accumulating ones add, whatever garbage the buffer held before.
TEST(OnednnGelu, OverwritingBackwardsWriteWhatTheAccumulatingOnesAdd) {
  const int64_t n = 4099;
  Rng rng(7);
  std::vector<float> x = uniform(rng, n, -6.0, 6.0), dout = uniform(rng, n, -1.0, 1.0);
  std::vector<float> added(n, 0.0f), added_p(n, 0.0f);
  std::vector<float> written(n, std::numeric_limits<float>::quiet_NaN()), written_p(n, 1e30f);
  gelu_backward_onednn(added.data(), dout.data(), x.data(), n, true);
  gelu_backward_onednn(written.data(), dout.data(), x.data(), n, false);
  gelu_backward(added_p.data(), dout.data(), x.data(), n, true);
  gelu_backward(written_p.data(), dout.data(), x.data(), n, false);
  expect_close(written, as_double(added), 0.0, 0.0, "onednn overwrite");
  expect_close(written_p, as_double(added_p), 0.0, 0.0, "plain overwrite");
}

// ---- Primitive cache ----------------------------------------------------------------

// The fused attention's softmax backward, written (accumulate false) over garbage: scale *
// what the accumulating unscaled backward adds to zeros, with exact zeros where the mask hid a key.
TEST(CausalSoftmaxScaledBackward, IsTheScaledAccumulatingBackwardAndZeroWhereMasked) {
  const int64_t batch = 3, Tq = 5, Tk = 7;
  const float scale = 0.3f;
  Rng rng(8);
  std::vector<float> scores = uniform(rng, batch * Tq * Tk, -3.0, 3.0), w(batch * Tq * Tk);
  std::vector<float> dw = uniform(rng, batch * Tq * Tk, -1.0, 1.0);
  causal_softmax_forward(w.data(), scores.data(), batch, Tq, Tk);
  std::vector<float> added(w.size(), 0.0f), written(w.size(), std::numeric_limits<float>::quiet_NaN());
  causal_softmax_backward(added.data(), dw.data(), w.data(), batch, Tq, Tk, 1.0f, true);
  causal_softmax_backward(written.data(), dw.data(), w.data(), batch, Tq, Tk, scale, false);
  std::vector<double> want(w.size());
  for (size_t i = 0; i < w.size(); ++i) want[i] = scale * double(added[i]);
  expect_close(written, want, 1e-7, 1e-6, "dscores");
  for (int64_t r = 0; r < batch * Tq; ++r)
    for (int64_t k = Tk - Tq + r % Tq + 1; k < Tk; ++k) EXPECT_EQ(written[r * Tk + k], 0.0f) << "row " << r;
}

// The kernels choose the kernels: the *_on_backend entry points run oneDNN's GELU and
// LayerNorm forward under the oneDNN backend and the plain ones under the others.
TEST(BackendDispatch, OnBackendKernelsAreOneDnnsUnderOneDnnAndPlainOtherwise) {
  const int64_t rows = 33, D = 64, n = rows * D;
  Rng rng(11);
  std::vector<float> x = uniform(rng, n, -3.0, 3.0), weight = uniform(rng, D, 0.5, 1.5), bias = uniform(rng, D, -0.5, 0.5);
  std::vector<float> dout = uniform(rng, n, -1.0, 1.0), mean(rows), rstd(rows);
  auto run = [&](bool on_backend, bool onednn) {
    std::vector<float> out(2 * n + n), dx(n, 0.25f);
    if (on_backend) {
      layernorm_forward_on_backend(out.data(), mean.data(), rstd.data(), x.data(), weight.data(), bias.data(), rows, D, 1e-5f);
      gelu_forward_on_backend(out.data() + n, x.data(), n);
      gelu_backward_on_backend(dx.data(), dout.data(), x.data(), n, true);
    } else {
      (onednn ? layernorm_forward_onednn : layernorm_forward)(out.data(), mean.data(), rstd.data(), x.data(),
                                                               weight.data(), bias.data(), rows, D, 1e-5f);
      (onednn ? gelu_forward_onednn : gelu_forward)(out.data() + n, x.data(), n);
      (onednn ? gelu_backward_onednn : gelu_backward)(dx.data(), dout.data(), x.data(), n, true);
    }
    std::copy(dx.begin(), dx.end(), out.begin() + 2 * n);
    return out;
  };
  const GemmBackend previous = gemm_backend();
  for (GemmBackend backend : {GemmBackend::onednn, GemmBackend::openblas, GemmBackend::reference}) {
    set_gemm_backend(backend);
    EXPECT_EQ(run(true, false), run(false, backend == GemmBackend::onednn)) << backend_name(backend);
  }
  set_gemm_backend(previous);
}

TEST(OnednnOpsCache, HundredCallsOnOneShapeCreateOnePrimitivePerKernel) {
  // Shapes no other test uses, so each kernel's first call creates exactly one primitive.
  const int64_t rows = 7, D = 19, n = rows * D;
  Rng rng(10);
  std::vector<float> x = uniform(rng, n, -1.0, 1.0), weight(D, 1.0f), bias(D, 0.0f), out(n), mean(rows), rstd(rows);
  std::vector<float> dout = uniform(rng, n, -1.0, 1.0), dx(n, 0.0f);
  size_t before = onednn_cached_primitive_count();
  for (int i = 0; i < 100; ++i) {
    layernorm_forward_onednn(out.data(), mean.data(), rstd.data(), x.data(), weight.data(), bias.data(), rows, D,
                             1e-5f);
    gelu_forward_onednn(out.data(), x.data(), n);
    gelu_backward_onednn(dx.data(), dout.data(), x.data(), n, true);
  }
  EXPECT_EQ(onednn_cached_primitive_count(), before + 3);
}

// As the GEMMs' (gemm_test.cpp): a primitive runs on the threads it was created for, so a
// new thread count makes a new one, and the old count finds its own again.
// Layer norm and GELU over ROWS x D, at 1 thread, then 2, then 1 again: the primitives
// created at each change.
std::vector<size_t> primitives_created_per_count_change(int64_t rows, int64_t D) {
  const int threads_before = num_threads();
  const int64_t n = rows * D;
  Rng rng(11);
  std::vector<float> x = uniform(rng, n, -1.0, 1.0), weight(D, 1.0f), bias(D, 0.0f), out(n), mean(rows), rstd(rows);
  auto run = [&] {
    layernorm_forward_onednn(out.data(), mean.data(), rstd.data(), x.data(), weight.data(), bias.data(), rows, D,
                             1e-5f);
    gelu_forward_onednn(out.data(), x.data(), n);
  };
  std::vector<size_t> created;
  for (int threads : {1, 2, 1}) {
    set_num_threads(threads);
    const size_t before = onednn_cached_primitive_count();
    run();
    created.push_back(onednn_cached_primitive_count() - before);
  }
  set_num_threads(threads_before);
  return created;
}

TEST(OnednnOpsCache, EachThreadCountHasItsOwnPrimitive) {
  const int64_t rows = 300, D = 123;  // 36,900 elements: over kParallelWork, so threaded
  ASSERT_GT(rows * D, kParallelWork);
  EXPECT_EQ(primitives_created_per_count_change(rows, D), (std::vector<size_t>{2, 2, 0}));
}

TEST(OnednnOpsCache, WorkBelowTheThresholdRunsOnOneThreadAtAnyCount) {
  const int64_t rows = 7, D = 19;  // 133 elements: one thread's primitive serves every count
  EXPECT_EQ(primitives_created_per_count_change(rows, D), (std::vector<size_t>{2, 0, 0}));
}

}  // namespace
}  // namespace mg

namespace mg {
namespace {

// gemm() (the dispatch, not gemm_onednn alone) at 1 thread, then 2, then 1 again on an
// M x N x K product: the primitives created at each change.
std::vector<size_t> gemm_primitives_per_count_change(int64_t M, int64_t N, int64_t K) {
  const int threads_before = num_threads();
  const GemmBackend backend_before = gemm_backend();
  set_gemm_backend(GemmBackend::onednn);
  std::vector<float> a(M * K, 0.5f), b(K * N, 0.25f), c(M * N);
  GemmArgs g;
  g.M = M, g.N = N, g.K = K, g.A = a.data(), g.lda = K, g.B = b.data(), g.ldb = N, g.C = c.data(), g.ldc = N;
  std::vector<size_t> created;
  for (int threads : {1, 2, 1}) {
    set_num_threads(threads);
    const size_t before = onednn_cached_primitive_count();
    gemm(g);
    created.push_back(onednn_cached_primitive_count() - before);
    EXPECT_EQ(c[0], 0.125f * static_cast<float>(K));
  }
  set_num_threads(threads_before);
  set_gemm_backend(backend_before);
  return created;
}

TEST(GemmThreads, AProductOverTheThresholdRunsOnTheThreadsInForce) {
  ASSERT_GE(2.0 * 256 * 256 * 129, kParallelFlops);
  EXPECT_EQ(gemm_primitives_per_count_change(256, 256, 129), (std::vector<size_t>{1, 1, 0}));
}

TEST(GemmThreads, AProductUnderTheThresholdRunsOnOneThreadAtAnyCount) {
  // One forward of the default model over 64 symbols: its largest product, the MLP's.
  ASSERT_LT(2.0 * 64 * 256 * 64, kParallelFlops);
  EXPECT_EQ(gemm_primitives_per_count_change(64, 256, 65), (std::vector<size_t>{1, 0, 0}));
}

}  // namespace
}  // namespace mg
