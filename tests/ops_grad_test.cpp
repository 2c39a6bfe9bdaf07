// Gradient checks of every autograd op against central finite differences, run under
// every GEMM backend, plus known-answer tests of the element-wise kernels' forwards.
//
// Each check takes the scalar objective f = sum(out * R), R a fixed random tensor of
// out's shape, so every output element's gradient path is weighted differently. The
// analytic gradient comes from backward(); the numeric one is
//   (f(x + h) - f(x - h)) / ((x + h) - (x - h))
// with f summed in double from the float32 outputs and the denominator taken from the
// float values actually stored, so the only noise left is the forward's own float32
// rounding, divided by 2h. It passes when |analytic - numeric| <= atol + rtol |numeric|.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "autograd/ops.h"
#include "kernels/cross_entropy.h"
#include "kernels/embedding.h"
#include "kernels/gelu.h"
#include "kernels/gemm.h"
#include "kernels/layernorm.h"
#include "kernels/rope.h"
#include "kernels/runtime.h"
#include "kernels/softmax.h"
#include "tensor/error.h"

namespace mg {

// Names the backend in gtest's messages (instead of "4-byte object").
void PrintTo(GemmBackend backend, std::ostream* os) { *os << backend_name(backend); }

namespace {

// Per-op finite-difference settings. Ops linear in the perturbed input (matmul, add,
// re-layouts, rope, ...) have no truncation error, so a large step shrinks the rounding
// noise; curved ops (gelu, layer_norm, softmax, cross-entropy) need a small step, and
// their tolerance covers h^2 f''' / 6 plus float32 noise / 2h. The last column is the
// worst error / bound seen over both backends (reference, openblas): the margin.
struct GradTolerance {
  float step;   // h
  double atol;  // absolute part of the bound
  double rtol;  // relative part of the bound
};
//                                          step     atol    rtol    worst seen
constexpr GradTolerance kMatmulTol{         0.25f,   2e-5,   1e-5};  // 0.06
constexpr GradTolerance kLinearTol{         0.25f,   2e-5,   1e-5};  // 0.04
constexpr GradTolerance kAddTol{            0.25f,   1e-6,   1e-6};  // 0.12
constexpr GradTolerance kScaleTol{          0.25f,   1e-6,   1e-6};  // 0.08
constexpr GradTolerance kEmbeddingTol{      0.25f,   1e-6,   1e-6};  // 0.06
constexpr GradTolerance kLayerNormTol{      1e-2f,   2e-4,   1e-3};  // 0.11
constexpr GradTolerance kGeluTol{           1e-2f,   2e-4,   1e-3};  // 0.06
constexpr GradTolerance kSplitHeadsTol{     0.25f,   1e-6,   1e-6};  // 0 (exact)
constexpr GradTolerance kMergeHeadsTol{     0.25f,   1e-6,   1e-6};  // 0 (exact)
constexpr GradTolerance kRopeTol{           0.25f,   1e-5,   1e-5};  // 0.05
constexpr GradTolerance kCausalSoftmaxTol{  1e-2f,   5e-5,   1e-3};  // 0.08
constexpr GradTolerance kCrossEntropyTol{   1e-2f,   4e-5,   2e-3};  // 0.09
constexpr GradTolerance kDropoutTol{        0.25f,   2e-6,   1e-6};  // 0.12
constexpr GradTolerance kAttentionBlockTol{ 1e-2f,   1e-3,   1e-2};  // 0.12

Tensor random_tensor(Shape shape, uint64_t seed, double scale = 1.0, double shift = 0.0) {
  Rng rng(seed);
  Tensor t = Tensor::empty(std::move(shape));
  for (int64_t i = 0; i < t.numel(); ++i) t[i] = static_cast<float>(shift + scale * rng.normal());
  return t;
}

Var param(Shape shape, uint64_t seed, double scale = 1.0, double shift = 0.0) {
  return Var(random_tensor(std::move(shape), seed, scale, shift), true);
}

double weighted_sum(const Tensor& out, const Tensor& weights) {
  double sum = 0.0;
  for (int64_t i = 0; i < out.numel(); ++i) sum += static_cast<double>(out[i]) * weights[i];
  return sum;
}

// f = sum(out * R) as a graph node, to seed backward() with dout = R.
Var weighted_sum_op(const Var& out, const Tensor& weights) {
  Tensor value = Tensor::from({1}, {static_cast<float>(weighted_sum(out.value(), weights))});
  return make_result(value, {out}, [out = out, weights](const Tensor& dout) mutable {
    for (int64_t i = 0; i < weights.numel(); ++i) out.grad()[i] += dout[0] * weights[i];
  });
}

using Build = std::function<Var(const std::vector<Var>&)>;

// Compares backward()'s gradient of sum(build(inputs) * R) with central differences, for
// every input that requires a gradient.
void check_gradients(const char* op, const GradTolerance& tol, std::vector<Var> inputs, const Build& build) {
  Var out = build(inputs);
  const Tensor weights = random_tensor(out.shape(), 977);
  backward(weighted_sum_op(out, weights));

  for (size_t which = 0; which < inputs.size(); ++which) {
    Var& input = inputs[which];
    if (!input.requires_grad()) continue;
    ASSERT_TRUE(input.has_grad()) << op << ": input " << which << " got no gradient";
    const Tensor analytic = input.grad().clone();
    double worst = 0.0;
    for (int64_t i = 0; i < input.value().numel(); ++i) {
      float& x = input.value()[i];
      const float saved = x;
      NoGradGuard no_grad;
      x = saved + tol.step;
      const float x_plus = x;
      const double f_plus = weighted_sum(build(inputs).value(), weights);
      x = saved - tol.step;
      const float x_minus = x;
      const double f_minus = weighted_sum(build(inputs).value(), weights);
      x = saved;
      const double numeric = (f_plus - f_minus) / (static_cast<double>(x_plus) - x_minus);
      const double error = std::abs(analytic[i] - numeric);
      const double bound = tol.atol + tol.rtol * std::abs(numeric);
      worst = std::max(worst, error / bound);
      EXPECT_LE(error, bound) << op << ": input " << which << " element " << i << " analytic " << analytic[i]
                              << " numeric " << numeric;
    }
    ::testing::Test::RecordProperty(std::string(op) + "_input" + std::to_string(which) + "_worst_error_over_bound",
                   std::to_string(worst));
  }
}

// The grad checks run once per GEMM backend: matmul and linear must be right on each.
class OpsGradTest : public ::testing::TestWithParam<GemmBackend> {
 protected:
  void SetUp() override {
    previous_ = gemm_backend();
    set_gemm_backend(GetParam());
  }
  void TearDown() override { set_gemm_backend(previous_); }
  GemmBackend previous_{};
};

INSTANTIATE_TEST_SUITE_P(Backends, OpsGradTest,
                         ::testing::Values(GemmBackend::reference, GemmBackend::openblas),
                         [](const auto& info) { return std::string(backend_name(info.param)); });

TEST_P(OpsGradTest, Matmul2D) {
  check_gradients("matmul_2d", kMatmulTol, {param({3, 5}, 1), param({5, 4}, 2)},
                  [](const std::vector<Var>& in) { return matmul(in[0], in[1]); });
}

TEST_P(OpsGradTest, MatmulBatchedOverTwoLeadingAxes) {
  check_gradients("matmul_batched", kMatmulTol, {param({2, 3, 3, 5}, 3), param({2, 3, 5, 4}, 4)},
                  [](const std::vector<Var>& in) { return matmul(in[0], in[1]); });
}

TEST_P(OpsGradTest, MatmulWithShared2DB) {
  check_gradients("matmul_shared_b", kMatmulTol, {param({2, 3, 5}, 5), param({5, 4}, 6)},
                  [](const std::vector<Var>& in) { return matmul(in[0], in[1]); });
}

TEST_P(OpsGradTest, MatmulTransposeBBatched) {
  check_gradients("matmul_transpose_b", kMatmulTol, {param({2, 3, 5}, 7), param({2, 4, 5}, 8)},
                  [](const std::vector<Var>& in) { return matmul(in[0], in[1], true); });
}

TEST_P(OpsGradTest, MatmulTransposeBShared2D) {
  check_gradients("matmul_transpose_b_shared", kMatmulTol, {param({2, 3, 5}, 9), param({4, 5}, 10)},
                  [](const std::vector<Var>& in) { return matmul(in[0], in[1], true); });
}

TEST_P(OpsGradTest, LinearWithBias) {
  check_gradients("linear_bias", kLinearTol, {param({2, 3, 5}, 11), param({4, 5}, 12), param({4}, 13)},
                  [](const std::vector<Var>& in) { return linear(in[0], in[1], in[2]); });
}

TEST_P(OpsGradTest, LinearWithoutBias) {
  check_gradients("linear_no_bias", kLinearTol, {param({7, 5}, 14), param({3, 5}, 15)},
                  [](const std::vector<Var>& in) { return linear(in[0], in[1]); });
}

TEST_P(OpsGradTest, AddSameShape) {
  check_gradients("add_same_shape", kAddTol, {param({3, 5}, 16), param({3, 5}, 17)},
                  [](const std::vector<Var>& in) { return add(in[0], in[1]); });
}

TEST_P(OpsGradTest, AddBroadcastBiasOverLeadingAxes) {
  check_gradients("add_broadcast_last", kAddTol, {param({2, 3, 5}, 18), param({5}, 19)},
                  [](const std::vector<Var>& in) { return add(in[0], in[1]); });
  check_gradients("add_broadcast_last_two", kAddTol, {param({2, 3, 5}, 20), param({3, 5}, 21)},
                  [](const std::vector<Var>& in) { return add(in[0], in[1]); });
}

TEST_P(OpsGradTest, AddOfAVarToItselfAccumulatesTwice) {
  check_gradients("add_self", kAddTol, {param({2, 3}, 22)},
                  [](const std::vector<Var>& in) { return add(in[0], in[0]); });
}

TEST_P(OpsGradTest, Scale) {
  check_gradients("scale", kScaleTol, {param({3, 5}, 23)},
                  [](const std::vector<Var>& in) { return scale(in[0], -1.7f); });
}

TEST_P(OpsGradTest, EmbeddingWithRepeatedIds) {
  const std::vector<int32_t> ids{1, 3, 1, 6, 0, 3, 3, 2};  // 3 three times, 1 twice, 4 and 5 never
  check_gradients("embedding", kEmbeddingTol, {param({7, 5}, 24)},
                  [&](const std::vector<Var>& in) { return embedding(in[0], ids, {2, 4}); });
}

TEST_P(OpsGradTest, LayerNormXWeightAndBias) {
  check_gradients("layer_norm", kLayerNormTol, {param({2, 3, 7}, 25), param({7}, 26, 0.3, 1.0), param({7}, 27)},
                  [](const std::vector<Var>& in) { return layer_norm(in[0], in[1], in[2], 1e-5f); });
}

TEST_P(OpsGradTest, Gelu) {
  check_gradients("gelu", kGeluTol, {param({3, 7}, 28, 2.0)},
                  [](const std::vector<Var>& in) { return gelu(in[0]); });
}

TEST_P(OpsGradTest, SplitHeadsEvenAndOddHeadWidth) {
  check_gradients("split_heads_d2", kSplitHeadsTol, {param({2, 3, 6}, 29)},
                  [](const std::vector<Var>& in) { return split_heads(in[0], 3); });
  check_gradients("split_heads_d3", kSplitHeadsTol, {param({2, 3, 6}, 30)},
                  [](const std::vector<Var>& in) { return split_heads(in[0], 2); });
}

TEST_P(OpsGradTest, MergeHeads) {
  check_gradients("merge_heads", kMergeHeadsTol, {param({2, 3, 4, 2}, 31)},
                  [](const std::vector<Var>& in) { return merge_heads(in[0]); });
}

TEST_P(OpsGradTest, RopeWithAndWithoutOffset) {
  const RopeTable table = make_rope_table(9, 6, 10000.0);
  check_gradients("rope", kRopeTol, {param({2, 2, 5, 6}, 32)},
                  [&](const std::vector<Var>& in) { return rope(in[0], table); });
  check_gradients("rope_offset", kRopeTol, {param({2, 2, 5, 6}, 33)},
                  [&](const std::vector<Var>& in) { return rope(in[0], table, 4); });
}

TEST_P(OpsGradTest, CausalSoftmaxSquare) {
  check_gradients("causal_softmax_square", kCausalSoftmaxTol, {param({2, 3, 5, 5}, 34)},
                  [](const std::vector<Var>& in) { return causal_softmax(in[0]); });
}

TEST_P(OpsGradTest, CausalSoftmaxFewerQueriesThanKeys) {
  check_gradients("causal_softmax_kv", kCausalSoftmaxTol, {param({2, 2, 3, 6}, 35)},
                  [](const std::vector<Var>& in) { return causal_softmax(in[0]); });
}

TEST_P(OpsGradTest, CrossEntropy) {
  const std::vector<int32_t> targets{6, 0, 3, 3, 1, 5};
  check_gradients("cross_entropy", kCrossEntropyTol, {param({2, 3, 7}, 36, 2.0)},
                  [&](const std::vector<Var>& in) { return cross_entropy(in[0], targets); });
}

TEST_P(OpsGradTest, DropoutWithFixedMask) {
  // A fresh Rng with the same seed per evaluation: every forward drops the same elements.
  check_gradients("dropout", kDropoutTol, {param({4, 9}, 37)}, [](const std::vector<Var>& in) {
    Rng rng(1234);
    return dropout(in[0], 0.3f, rng);
  });
}

// ln -> q,k,v -> split -> rope -> q k^T / sqrt(d) -> causal softmax -> @ v -> merge -> out proj:
// gradients through the re-layouts, the rotation and the masked softmax, end to end.
TEST_P(OpsGradTest, AttentionBlockEndToEnd) {
  constexpr int64_t H = 2, d = 4, D = H * d, T = 5;
  const RopeTable table = make_rope_table(T, d, 10000.0);
  std::vector<Var> inputs{param({2, T, D}, 40),          param({D}, 41, 0.2, 1.0), param({D}, 42, 0.2),
                          param({D, D}, 43, 0.5),        param({D, D}, 44, 0.5),   param({D, D}, 45, 0.5),
                          param({D, D}, 46, 0.5)};
  check_gradients("attention_block", kAttentionBlockTol, inputs, [&](const std::vector<Var>& in) {
    Var h = layer_norm(in[0], in[1], in[2], 1e-5f);
    Var q = rope(split_heads(linear(h, in[3]), H), table);
    Var k = rope(split_heads(linear(h, in[4]), H), table);
    Var v = split_heads(linear(h, in[5]), H);
    Var w = causal_softmax(scale(matmul(q, k, true), 1.0f / std::sqrt(static_cast<float>(d))));
    return linear(merge_heads(matmul(w, v)), in[6]);
  });
}

// ---- graph bookkeeping ----------------------------------------------------------------

TEST(OpsGraphTest, BackwardFreesTheGraphAndLeavesLeafGradients) {
  Var x = param({3, 4}, 50);
  Var w = param({5, 4}, 51);
  Var hidden = gelu(linear(x, w));
  Var loss = cross_entropy(hidden, std::vector<int32_t>{0, 4, 2});
  ASSERT_FALSE(hidden.node()->inputs.empty());
  backward(loss);
  EXPECT_TRUE(loss.node()->inputs.empty());
  EXPECT_FALSE(static_cast<bool>(loss.node()->backward));
  EXPECT_TRUE(hidden.node()->inputs.empty());
  EXPECT_FALSE(static_cast<bool>(hidden.node()->backward));
  EXPECT_FALSE(hidden.has_grad());  // interior gradients are released too
  ASSERT_TRUE(w.has_grad());
  const Tensor dw = w.grad().clone();
  backward(loss);  // nothing left to sweep: leaf gradients do not change
  for (int64_t i = 0; i < dw.numel(); ++i) EXPECT_EQ(w.grad()[i], dw[i]);
}

TEST(OpsGraphTest, NoGradGuardRecordsNothing) {
  Var x = param({3, 4}, 52);
  Var w = param({5, 4}, 53);
  NoGradGuard no_grad;
  Var out = gelu(linear(x, w));
  EXPECT_FALSE(out.requires_grad());
  EXPECT_TRUE(out.node()->inputs.empty());
  EXPECT_FALSE(static_cast<bool>(out.node()->backward));
}

TEST(OpsGraphTest, DropoutWithZeroProbabilityIsTheIdentityAndDrawsNothing) {
  Var x = param({3, 4}, 54);
  Rng rng(7);
  const auto state = rng.state();
  Var out = dropout(x, 0.0f, rng);
  EXPECT_EQ(out.node(), x.node());
  EXPECT_EQ(rng.state(), state);
}

TEST(OpsGraphTest, DropoutZeroesAboutPAndScalesSurvivors) {
  Var x(Tensor::full({100, 100}, 1.0f));
  Rng rng(8);
  Var out = dropout(x, 0.25f, rng);
  int64_t dropped = 0;
  for (int64_t i = 0; i < out.value().numel(); ++i) {
    if (out.value()[i] == 0.0f) ++dropped;
    else EXPECT_FLOAT_EQ(out.value()[i], 1.0f / 0.75f);
  }
  EXPECT_NEAR(static_cast<double>(dropped) / 10000.0, 0.25, 0.02);  // 5 sigma is 0.022
}

// ---- shape errors -------------------------------------------------------------------------

template <typename Fn>
std::string shape_error_of(Fn fn) {
  try {
    fn();
  } catch (const ShapeError& e) {
    return e.what();
  }
  return "(no ShapeError)";
}

TEST(OpsShapeTest, MismatchesThrowShapeErrorNamingBothShapes) {
  Var a(Tensor::zeros({2, 3, 4})), b(Tensor::zeros({5, 6})), c(Tensor::zeros({3, 4, 6}));
  std::string msg = shape_error_of([&] { matmul(a, b); });
  EXPECT_NE(msg.find("[2,3,4]"), std::string::npos) << msg;
  EXPECT_NE(msg.find("[5,6]"), std::string::npos) << msg;
  msg = shape_error_of([&] { matmul(a, Var(Tensor::zeros({3, 4, 6}))); });  // leading axes 2 vs 3
  EXPECT_NE(msg.find("[3,4,6]"), std::string::npos) << msg;
  msg = shape_error_of([&] { linear(a, b); });
  EXPECT_NE(msg.find("[2,3,4]"), std::string::npos) << msg;
  EXPECT_NE(msg.find("[5,6]"), std::string::npos) << msg;
  msg = shape_error_of([&] { add(a, Var(Tensor::zeros({3}))); });
  EXPECT_NE(msg.find("[2,3,4]"), std::string::npos) << msg;
  EXPECT_NE(msg.find("[3]"), std::string::npos) << msg;
  msg = shape_error_of([&] { layer_norm(a, Var(Tensor::zeros({3})), Var(Tensor::zeros({4})), 1e-5f); });
  EXPECT_NE(msg.find("[2,3,4]"), std::string::npos) << msg;
  msg = shape_error_of([&] { causal_softmax(c); });  // 4 queries, 6 keys is fine ...
  EXPECT_EQ(msg, "(no ShapeError)");
  msg = shape_error_of([&] { causal_softmax(Var(Tensor::zeros({2, 5, 3}))); });  // ... 5 queries, 3 keys is not
  EXPECT_NE(msg.find("[2,5,3]"), std::string::npos) << msg;
  msg = shape_error_of([&] { cross_entropy(a, std::vector<int32_t>{0, 1}); });
  EXPECT_NE(msg.find("[2,3,4]"), std::string::npos) << msg;
  const RopeTable table = make_rope_table(3, 4, 10000.0);
  msg = shape_error_of([&] { rope(Var(Tensor::zeros({1, 1, 3, 4})), table, 1); });  // needs 4 positions
  EXPECT_NE(msg.find("[1,1,3,4]"), std::string::npos) << msg;
}

TEST(OpsShapeTest, IdsOutsideTheTableAreInputErrors) {
  Var table(Tensor::zeros({4, 2}));
  EXPECT_THROW(embedding(table, std::vector<int32_t>{0, 4}, {2}), InputError);
  EXPECT_THROW(embedding(table, std::vector<int32_t>{-1}, {1}), InputError);
  EXPECT_THROW(cross_entropy(Var(Tensor::zeros({2, 3})), std::vector<int32_t>{0, 3}), InputError);
}

// ---- kernel forwards: known answers ---------------------------------------------------

TEST(KernelForwardTest, GeluMatchesTheErfFormulaInDouble) {
  const std::vector<float> xs{-10.0f, -3.0f, -1.0f, -0.5f, -1e-3f, 0.0f, 1e-3f, 0.5f, 1.0f, 3.0f, 10.0f};
  std::vector<float> out(xs.size()), dx(xs.size(), 0.0f), ones(xs.size(), 1.0f);
  gelu_forward(out.data(), xs.data(), static_cast<int64_t>(xs.size()));
  gelu_backward(dx.data(), ones.data(), xs.data(), static_cast<int64_t>(xs.size()));
  for (size_t i = 0; i < xs.size(); ++i) {
    const double x = xs[i];
    const double cdf = 0.5 * (1.0 + std::erf(x / std::sqrt(2.0)));
    const double pdf = std::exp(-0.5 * x * x) / std::sqrt(2.0 * M_PI);
    EXPECT_NEAR(out[i], x * cdf, 1e-7 + 1e-6 * std::abs(x * cdf)) << "x=" << x;
    EXPECT_NEAR(dx[i], cdf + x * pdf, 1e-6) << "x=" << x;
  }
  EXPECT_NEAR(out[8], 0.8413447460685429, 1e-6);  // gelu(1) = Phi(1)
}

// gelu.cpp uses its own vectorised erfc and exp; sweep them densely, tails included.
TEST(KernelForwardTest, GeluStaysWithinFloatPrecisionOfTheErfFormulaFromMinus20To20) {
  constexpr int64_t n = 40001;
  std::vector<float> xs(n), out(n), dx(n, 0.0f), ones(n, 1.0f);
  for (int64_t i = 0; i < n; ++i) xs[i] = -20.0f + 40.0f * static_cast<float>(i) / (n - 1);
  gelu_forward(out.data(), xs.data(), n);
  gelu_backward(dx.data(), ones.data(), xs.data(), n);
  for (int64_t i = 0; i < n; ++i) {
    const double x = xs[i];
    const double cdf = 0.5 * std::erfc(-x / std::sqrt(2.0));
    const double pdf = std::exp(-0.5 * x * x) / std::sqrt(2.0 * M_PI);
    ASSERT_NEAR(out[i], x * cdf, 6e-7 + 1e-7 * std::abs(x * cdf)) << "x=" << x;
    ASSERT_NEAR(dx[i], cdf + x * pdf, 5e-7) << "x=" << x;
  }
}

TEST(KernelForwardTest, LayerNormMatchesADoubleComputationEvenFarFromZero) {
  constexpr int64_t rows = 4, D = 9;
  const Tensor x = random_tensor({rows, D}, 60, 1.0, 100.0);  // mean ~100, std ~1
  const Tensor w = random_tensor({D}, 61, 0.5, 1.0), b = random_tensor({D}, 62);
  std::vector<float> out(rows * D), mean(rows), rstd(rows);
  layernorm_forward(out.data(), mean.data(), rstd.data(), x.data(), w.data(), b.data(), rows, D, 1e-5f);
  for (int64_t r = 0; r < rows; ++r) {
    double m = 0.0, var = 0.0;
    for (int64_t j = 0; j < D; ++j) m += x[r * D + j];
    m /= D;
    for (int64_t j = 0; j < D; ++j) var += (x[r * D + j] - m) * (x[r * D + j] - m);
    var /= D;
    for (int64_t j = 0; j < D; ++j) {
      const double expected = (x[r * D + j] - m) / std::sqrt(var + 1e-5) * w[j] + b[j];
      EXPECT_NEAR(out[r * D + j], expected, 5e-5) << "row " << r << " col " << j;
    }
    EXPECT_NEAR(mean[r], m, 1e-4);
    EXPECT_NEAR(rstd[r], 1.0 / std::sqrt(var + 1e-5), 1e-4);
  }
}

TEST(KernelForwardTest, RopeMatchesAScalarLoopOfTheSpecFormula) {
  constexpr int64_t rows = 3, T = 7, d = 8, offset = 2;
  constexpr double base = 10000.0;
  const RopeTable table = make_rope_table(offset + T, d, base);
  const Tensor x = random_tensor({rows, T, d}, 63);
  std::vector<float> out(rows * T * d);
  rope_forward(out.data(), x.data(), table, rows, T, d, offset);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t t = 0; t < T; ++t) {
      const int64_t p = offset + t;
      for (int64_t i = 0; i < d / 2; ++i) {
        const double angle = static_cast<double>(p) * std::pow(base, -2.0 * i / d);
        const float c = static_cast<float>(std::cos(angle)), s = static_cast<float>(std::sin(angle));
        EXPECT_EQ(table.cos[p * d / 2 + i], c);  // angles in double, rounded once to float32
        EXPECT_EQ(table.sin[p * d / 2 + i], s);
        const double x0 = x[(r * T + t) * d + 2 * i], x1 = x[(r * T + t) * d + 2 * i + 1];
        EXPECT_NEAR(out[(r * T + t) * d + 2 * i], x0 * c - x1 * s, 1e-6);
        EXPECT_NEAR(out[(r * T + t) * d + 2 * i + 1], x0 * s + x1 * c, 1e-6);
      }
    }
  }
  // Position 0 is the identity; position 1, pair 0 turns by exactly 1 radian.
  EXPECT_EQ(table.cos[0], 1.0f);
  EXPECT_EQ(table.sin[0], 0.0f);
  EXPECT_EQ(table.cos[d / 2], static_cast<float>(std::cos(1.0)));
  EXPECT_THROW(make_rope_table(4, 5, base), ShapeError);  // odd head width
}

TEST(KernelForwardTest, CrossEntropyHandValues) {
  // Row 0: logits [1,2,3], target 2: log(e + e^2 + e^3) - 3 = 0.40760596444438
  // Row 1: same logits, target 0: 2.40760596444438. Mean 1.40760596444438.
  const std::vector<float> logits{1, 2, 3, 1, 2, 3};
  const std::vector<int32_t> targets{2, 0};
  std::vector<float> probs(6);
  const double loss = cross_entropy_forward(probs.data(), logits.data(), targets.data(), 2, 3);
  EXPECT_NEAR(loss, 1.40760596444438, 1e-6);
  EXPECT_NEAR(probs[2], std::exp(3.0) / (std::exp(1.0) + std::exp(2.0) + std::exp(3.0)), 1e-7);

  Var out = cross_entropy(Var(Tensor::from({2, 3}, logits)), targets);
  EXPECT_EQ(out.shape(), Shape{1});
  EXPECT_NEAR(out.value()[0], 1.40760596444438, 1e-6);
}

TEST(KernelForwardTest, CrossEntropyIsStableForLogitsOfTenThousand) {
  const std::vector<float> logits{1e4f, -1e4f, 0.0f, 1e4f, -1e4f, 0.0f, 1e4f, -1e4f, 0.0f};
  const std::vector<int32_t> targets{0, 2, 1};  // losses 0, 1e4, 2e4
  std::vector<float> probs(9), dlogits(9, 0.0f);
  const double loss = cross_entropy_forward(probs.data(), logits.data(), targets.data(), 3, 3);
  EXPECT_NEAR(loss, (0.0 + 1e4 + 2e4) / 3.0, 1e-3);
  cross_entropy_backward(dlogits.data(), probs.data(), targets.data(), 3, 3, 1.0f);
  for (int i = 0; i < 9; ++i) {
    EXPECT_TRUE(std::isfinite(probs[i]) && std::isfinite(dlogits[i])) << i;
  }
  EXPECT_EQ(probs[0], 1.0f);
  EXPECT_NEAR(dlogits[3], -0.0f + 1.0f / 3.0f, 1e-7);  // row 1: p = [1,0,0], target 2
  EXPECT_NEAR(dlogits[5], -1.0f / 3.0f, 1e-7);
}

TEST(KernelForwardTest, CausalSoftmaxKnownRowsAndStability) {
  // Equal scores: query i spreads evenly over keys 0..i; Tq=1 against Tk=3 sees all keys.
  std::vector<float> scores(9, 0.0f), w(9);
  causal_softmax_forward(w.data(), scores.data(), 1, 3, 3);
  const std::vector<float> expected{1, 0, 0, 0.5f, 0.5f, 0, 1 / 3.0f, 1 / 3.0f, 1 / 3.0f};
  for (int i = 0; i < 9; ++i) EXPECT_NEAR(w[i], expected[i], 1e-7) << i;
  std::vector<float> one_row(3);
  causal_softmax_forward(one_row.data(), scores.data(), 1, 1, 3);
  for (float v : one_row) EXPECT_NEAR(v, 1 / 3.0f, 1e-7);

  // Scores of +-1e4 (the masked key holds +1e4 and must not win).
  const std::vector<float> big{-1e4f, 1e4f, 1e4f, 1e4f, -1e4f, 1e4f};
  std::vector<float> wb(6);
  causal_softmax_forward(wb.data(), big.data(), 1, 2, 3);  // rows see 2 and 3 keys
  const std::vector<float> expected_big{0, 1, 0, 0.5f, 0, 0.5f};
  for (int i = 0; i < 6; ++i) EXPECT_NEAR(wb[i], expected_big[i], 1e-7) << i;
}

TEST(KernelForwardTest, EmbeddingCopiesRowsAndScatterAddsRepeats) {
  const std::vector<float> table{0, 1, 10, 11, 20, 21};  // [3,2]
  const std::vector<int32_t> ids{2, 0, 2};
  std::vector<float> out(6);
  embedding_forward(out.data(), table.data(), ids.data(), 3, 2);
  EXPECT_EQ(out, (std::vector<float>{20, 21, 0, 1, 20, 21}));
  std::vector<float> dtable(6, 0.0f);
  const std::vector<float> dout{1, 2, 3, 4, 5, 6};
  embedding_backward(dtable.data(), dout.data(), ids.data(), 3, 2);
  EXPECT_EQ(dtable, (std::vector<float>{3, 4, 0, 0, 6, 8}));
}

// Reductions across rows must give the same bits for every thread count.
TEST(KernelForwardTest, RowReductionsAreIdenticalForOneAndTwoThreads) {
  constexpr int64_t rows = 4096, D = 64, V = 300;
  const Tensor x = random_tensor({rows, D}, 70), dout = random_tensor({rows, D}, 71);
  const Tensor w = random_tensor({D}, 72), b = random_tensor({D}, 73);
  std::vector<int32_t> ids(rows);
  for (int64_t i = 0; i < rows; ++i) ids[i] = static_cast<int32_t>((i * 7919) % V);
  const Tensor logits = random_tensor({rows, D}, 74, 3.0);
  std::vector<int32_t> targets(rows);
  for (int64_t i = 0; i < rows; ++i) targets[i] = static_cast<int32_t>(i % D);

  auto run = [&](int threads) {
    set_num_threads(threads);
    std::vector<float> out(rows * D), mean(rows), rstd(rows), dx(rows * D, 0.0f), dw(D, 0.0f), db(D, 0.0f);
    layernorm_forward(out.data(), mean.data(), rstd.data(), x.data(), w.data(), b.data(), rows, D, 1e-5f);
    layernorm_backward(dx.data(), dw.data(), db.data(), dout.data(), x.data(), w.data(), mean.data(), rstd.data(),
                       rows, D);
    std::vector<float> dtable(V * D, 0.0f), probs(rows * D);
    embedding_backward(dtable.data(), dout.data(), ids.data(), rows, D);
    const double loss = cross_entropy_forward(probs.data(), logits.data(), targets.data(), rows, D);
    dw.insert(dw.end(), db.begin(), db.end());
    dw.insert(dw.end(), dtable.begin(), dtable.end());
    dw.push_back(static_cast<float>(loss));
    dw.push_back(static_cast<float>(loss - static_cast<float>(loss)));  // the double's low bits
    return dw;
  };
  const int previous = num_threads();
  const std::vector<float> one = run(1), two = run(2);
  set_num_threads(previous);
  ASSERT_EQ(one.size(), two.size());
  for (size_t i = 0; i < one.size(); ++i) ASSERT_EQ(one[i], two[i]) << "element " << i;
}

}  // namespace
}  // namespace mg
