// The oneDNN layer normalization, GELU and causal softmax kernels, held against
// double-precision formulas written here (and the LayerNorm backward against central
// finite differences of the double forward), then against the plain kernels on the
// model's shapes. Backward kernels must ACCUMULATE: every gradient buffer starts non-zero.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "kernels/gelu.h"
#include "kernels/layernorm.h"
#include "kernels/onednn_ops.h"
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

TEST(OnednnLayerNorm, BackwardAccumulatesFiniteDifferenceGradients) {
  // L = sum(out * dout); its gradients by central differences of the double forward.
  const int64_t rows = 4, D = 16;
  const double eps = 1e-5, h = 1e-5;
  Rng rng(3);
  std::vector<float> x = uniform(rng, rows * D, -2.0, 2.0), weight = uniform(rng, D, 0.5, 1.5),
                     bias = uniform(rng, D, -0.5, 0.5), dout = uniform(rng, rows * D, -1.0, 1.0);
  auto loss = [&](const std::vector<double>& xd, const std::vector<float>& w, const std::vector<float>& b) {
    std::vector<double> out, m, s;
    layernorm_double(out, m, s, xd, w, b, rows, D, eps);
    double sum = 0.0;
    for (int64_t i = 0; i < rows * D; ++i) sum += out[i] * dout[i];
    return sum;
  };
  std::vector<double> xd = as_double(x), dx_fd(rows * D), dweight_fd(D), dbias_fd(D);
  for (int64_t i = 0; i < rows * D; ++i) {
    std::vector<double> up = xd, down = xd;
    up[i] += h;
    down[i] -= h;
    dx_fd[i] = (loss(up, weight, bias) - loss(down, weight, bias)) / (2 * h);
  }
  for (int64_t j = 0; j < D; ++j) {
    // weight and bias are float in the forward; their perturbation is applied in double
    // through the exact linearity of out in them: d out / d weight_j = xhat_j, d/d bias_j = 1.
    double dw = 0.0, db = 0.0;
    std::vector<double> out, m, s;
    layernorm_double(out, m, s, xd, {}, {}, rows, D, eps);  // out = xhat
    for (int64_t r = 0; r < rows; ++r) {
      dw += dout[r * D + j] * out[r * D + j];
      db += dout[r * D + j];
    }
    dweight_fd[j] = dw;
    dbias_fd[j] = db;
  }

  std::vector<float> out(rows * D), mean(rows), rstd(rows);
  layernorm_forward_onednn(out.data(), mean.data(), rstd.data(), x.data(), weight.data(), bias.data(), rows, D,
                           static_cast<float>(eps));
  std::vector<float> dx = uniform(rng, rows * D, -1.0, 1.0), dweight = uniform(rng, D, -1.0, 1.0),
                     dbias = uniform(rng, D, -1.0, 1.0);
  std::vector<double> dx_want = as_double(dx), dweight_want = as_double(dweight), dbias_want = as_double(dbias);
  for (int64_t i = 0; i < rows * D; ++i) dx_want[i] += dx_fd[i];
  for (int64_t j = 0; j < D; ++j) {
    dweight_want[j] += dweight_fd[j];
    dbias_want[j] += dbias_fd[j];
  }
  layernorm_backward_onednn(dx.data(), dweight.data(), dbias.data(), dout.data(), x.data(), weight.data(),
                            mean.data(), rstd.data(), rows, D);
  expect_close(dx, dx_want, 1e-4, 1e-4, "dx");
  expect_close(dweight, dweight_want, 1e-5, 1e-5, "dweight");
  expect_close(dbias, dbias_want, 1e-5, 1e-5, "dbias");

  // Null outputs are skipped; the others still accumulate.
  std::vector<float> dx_only = dx;
  layernorm_backward_onednn(dx_only.data(), nullptr, nullptr, dout.data(), x.data(), weight.data(), mean.data(),
                            rstd.data(), rows, D);
  for (int64_t i = 0; i < rows * D; ++i) dx_want[i] += dx_fd[i];
  expect_close(dx_only, dx_want, 2e-4, 1e-4, "dx (second accumulation)");
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

  std::vector<float> dx(rows * D, 0.5f), dweight(D, 0.5f), dbias(D, 0.5f);
  std::vector<float> dx_p = dx, dweight_p = dweight, dbias_p = dbias;
  layernorm_backward_onednn(dx.data(), dweight.data(), dbias.data(), dout.data(), x.data(), weight.data(),
                            mean.data(), rstd.data(), rows, D);
  layernorm_backward(dx_p.data(), dweight_p.data(), dbias_p.data(), dout.data(), x.data(), weight.data(),
                     mean_p.data(), rstd_p.data(), rows, D);
  expect_close(dx, as_double(dx_p), 1e-4, 1e-4, "dx");
  // Sums over 2048 rows of terms up to ~3: allow float32 summation-order differences.
  expect_close(dweight, as_double(dweight_p), 1e-3, 1e-4, "dweight");
  expect_close(dbias, as_double(dbias_p), 1e-3, 1e-4, "dbias");
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
  gelu_backward_onednn(dx.data(), dout.data(), x.data(), n);
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
  gelu_backward_onednn(dx.data(), dout.data(), x.data(), n);
  gelu_backward(dx_p.data(), dout.data(), x.data(), n);
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
  gelu_backward_onednn(added.data(), dout.data(), x.data(), n);
  gelu_backward_onednn_overwrite(written.data(), dout.data(), x.data(), n);
  gelu_backward(added_p.data(), dout.data(), x.data(), n);
  gelu_backward_overwrite(written_p.data(), dout.data(), x.data(), n);
  expect_close(written, as_double(added), 0.0, 0.0, "onednn overwrite");
  expect_close(written_p, as_double(added_p), 0.0, 0.0, "plain overwrite");
}

// ---- Causal softmax ------------------------------------------------------------------

// Double weights for scores [batch,Tq,Tk]; query i sees keys s < Tk - Tq + i + 1.
std::vector<double> causal_softmax_double(const std::vector<float>& scores, int64_t batch, int64_t Tq, int64_t Tk) {
  std::vector<double> w(batch * Tq * Tk, 0.0);
  for (int64_t r = 0; r < batch * Tq; ++r) {
    int64_t seen = Tk - Tq + r % Tq + 1;
    double max = -std::numeric_limits<double>::infinity(), sum = 0.0;
    for (int64_t k = 0; k < seen; ++k) max = std::max(max, double(scores[r * Tk + k]));
    for (int64_t k = 0; k < seen; ++k) sum += std::exp(scores[r * Tk + k] - max);
    for (int64_t k = 0; k < seen; ++k) w[r * Tk + k] = std::exp(scores[r * Tk + k] - max) / sum;
  }
  return w;
}

TEST(OnednnCausalSoftmax, ForwardMatchesDoubleAndMasksExactly) {
  struct Shape {
    int64_t batch, Tq, Tk;
  };
  Rng rng(7);
  for (Shape s : {Shape{3, 5, 5}, Shape{2, 1, 7}, Shape{2, 3, 7}, Shape{64, 64, 64}}) {
    SCOPED_TRACE("batch " + std::to_string(s.batch) + " Tq " + std::to_string(s.Tq) + " Tk " + std::to_string(s.Tk));
    std::vector<float> scores = uniform(rng, s.batch * s.Tq * s.Tk, -4.0, 4.0);
    scores[0] = 1e4f;  // huge scores must neither overflow nor swamp the row
    scores[1] = -1e4f;
    std::vector<float> w(scores.size(), std::numeric_limits<float>::quiet_NaN());
    causal_softmax_forward_onednn(w.data(), scores.data(), s.batch, s.Tq, s.Tk);
    std::vector<double> want = causal_softmax_double(scores, s.batch, s.Tq, s.Tk);
    expect_close(w, want, 1e-6, 1e-5, "weights");
    for (int64_t r = 0; r < s.batch * s.Tq; ++r)
      for (int64_t k = s.Tk - s.Tq + r % s.Tq + 1; k < s.Tk; ++k)
        ASSERT_EQ(w[r * s.Tk + k], 0.0f) << "masked weight at row " << r << " key " << k;
  }
}

TEST(OnednnCausalSoftmax, BackwardAccumulatesAndLeavesMaskedScoresAlone) {
  const int64_t batch = 3, Tq = 4, Tk = 6;
  Rng rng(8);
  std::vector<float> scores = uniform(rng, batch * Tq * Tk, -3.0, 3.0), dw = uniform(rng, batch * Tq * Tk, -1.0, 1.0);
  std::vector<float> w(scores.size()), ds = uniform(rng, scores.size(), -1.0, 1.0);
  causal_softmax_forward_onednn(w.data(), scores.data(), batch, Tq, Tk);
  std::vector<double> want = as_double(ds);
  for (int64_t r = 0; r < batch * Tq; ++r) {
    double dot = 0.0;
    for (int64_t k = 0; k < Tk; ++k) dot += double(w[r * Tk + k]) * dw[r * Tk + k];
    for (int64_t k = 0; k < Tk; ++k) want[r * Tk + k] += w[r * Tk + k] * (dw[r * Tk + k] - dot);
  }
  const std::vector<float> ds_before = ds;
  causal_softmax_backward_onednn(ds.data(), dw.data(), w.data(), batch, Tq, Tk);
  expect_close(ds, want, 1e-6, 1e-5, "dscores");
  for (int64_t r = 0; r < batch * Tq; ++r)
    for (int64_t k = Tk - Tq + r % Tq + 1; k < Tk; ++k)
      ASSERT_EQ(ds[r * Tk + k], ds_before[r * Tk + k]) << "masked score changed at row " << r << " key " << k;
}

TEST(OnednnCausalSoftmax, AgreesWithPlainKernelsOnModelShape) {
  const int64_t batch = 64, T = 64;
  Rng rng(9);
  std::vector<float> scores = uniform(rng, batch * T * T, -5.0, 5.0), dw = uniform(rng, batch * T * T, -1.0, 1.0);
  std::vector<float> w(scores.size()), w_p(scores.size()), ds(scores.size(), 0.5f), ds_p(scores.size(), 0.5f);
  causal_softmax_forward_onednn(w.data(), scores.data(), batch, T, T);
  causal_softmax_forward(w_p.data(), scores.data(), batch, T, T);
  expect_close(w, as_double(w_p), 1e-6, 1e-5, "weights");
  causal_softmax_backward_onednn(ds.data(), dw.data(), w_p.data(), batch, T, T);
  causal_softmax_backward(ds_p.data(), dw.data(), w_p.data(), batch, T, T);
  expect_close(ds, as_double(ds_p), 1e-6, 1e-5, "dscores");
}

// ---- Primitive cache ----------------------------------------------------------------

// The fused attention's softmax backward: scale * (what causal_softmax_backward adds to
// zeros), written over garbage, with exact zeros where the mask hid a key.
TEST(CausalSoftmaxScaledBackward, IsTheScaledAccumulatingBackwardAndZeroWhereMasked) {
  const int64_t batch = 3, Tq = 5, Tk = 7;
  const float scale = 0.3f;
  Rng rng(8);
  std::vector<float> scores = uniform(rng, batch * Tq * Tk, -3.0, 3.0), w(batch * Tq * Tk);
  std::vector<float> dw = uniform(rng, batch * Tq * Tk, -1.0, 1.0);
  causal_softmax_forward(w.data(), scores.data(), batch, Tq, Tk);
  std::vector<float> added(w.size(), 0.0f), written(w.size(), std::numeric_limits<float>::quiet_NaN());
  causal_softmax_backward(added.data(), dw.data(), w.data(), batch, Tq, Tk);
  causal_softmax_backward_scaled(written.data(), dw.data(), w.data(), batch, Tq, Tk, scale);
  std::vector<double> want(w.size());
  for (size_t i = 0; i < w.size(); ++i) want[i] = scale * double(added[i]);
  expect_close(written, want, 1e-7, 1e-6, "dscores");
  for (int64_t r = 0; r < batch * Tq; ++r)
    for (int64_t k = Tk - Tq + r % Tq + 1; k < Tk; ++k) EXPECT_EQ(written[r * Tk + k], 0.0f) << "row " << r;
}

TEST(OnednnOpsCache, HundredCallsOnOneShapeCreateOnePrimitivePerKernel) {
  // Shapes no other test uses, so each kernel's first call creates exactly one primitive.
  const int64_t rows = 7, D = 19, n = rows * D;
  Rng rng(10);
  std::vector<float> x = uniform(rng, n, -1.0, 1.0), weight(D, 1.0f), bias(D, 0.0f), out(n), mean(rows), rstd(rows);
  std::vector<float> dout = uniform(rng, n, -1.0, 1.0), dx(n, 0.0f), dweight(D, 0.0f), dbias(D, 0.0f);
  size_t before = onednn_cached_primitive_count();
  for (int i = 0; i < 100; ++i) {
    layernorm_forward_onednn(out.data(), mean.data(), rstd.data(), x.data(), weight.data(), bias.data(), rows, D,
                             1e-5f);
    layernorm_backward_onednn(dx.data(), dweight.data(), dbias.data(), dout.data(), x.data(), weight.data(),
                              mean.data(), rstd.data(), rows, D);
    gelu_forward_onednn(out.data(), x.data(), n);
    gelu_backward_onednn(dx.data(), dout.data(), x.data(), n);
    causal_softmax_forward_onednn(out.data(), x.data(), 1, rows, D);
    causal_softmax_backward_onednn(dx.data(), dout.data(), out.data(), 1, rows, D);
  }
  EXPECT_EQ(onednn_cached_primitive_count(), before + 6);
}

}  // namespace
}  // namespace mg
