// Gradient checks of every autograd op against central finite differences, run under
// every GEMM backend (the kernels' forward known answers are in kernels_forward_test.cpp).
//
// Each check takes the scalar objective f = sum(out * R), R a fixed random tensor of
// out's shape, so every output element's gradient path is weighted differently. The
// analytic gradient comes from backward(); the numeric one is
//   (f(x + h) - f(x - h)) / ((x + h) - (x - h))
// with f summed in double from the float32 outputs and the denominator taken from the
// float values actually stored, so the only noise left is the forward's own float32
// rounding, divided by 2h. It passes when |analytic - numeric| <= atol + rtol |numeric|.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
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
#include "core/error.h"

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
  return make_result(value, {out}, [out, weights](const Tensor& dout) {
    const GradOut dx = out.grad_out();
    for (int64_t i = 0; i < weights.numel(); ++i) dx.data[i] = (dx.accumulate ? dx.data[i] : 0.0f) + dout[0] * weights[i];
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

// The fused causal_softmax(q k^T * scale) against finite differences, and against the
// composed ops it replaces: the same weights and the same gradients up to float rounding.
TEST_P(OpsGradTest, CausalAttentionWeightsFusedMatchesFiniteDifferencesAndComposedOps) {
  const float s = 0.35f;
  check_gradients("attention_weights_square", kCausalSoftmaxTol, {param({2, 3, 5, 4}, 60), param({2, 3, 5, 4}, 61)},
                  [&](const std::vector<Var>& in) { return causal_attention_weights(in[0], in[1], s); });
  check_gradients("attention_weights_kv", kCausalSoftmaxTol, {param({2, 2, 3, 4}, 62), param({2, 2, 6, 4}, 63)},
                  [&](const std::vector<Var>& in) { return causal_attention_weights(in[0], in[1], s); });

  Var q1 = param({2, 2, 6, 4}, 64), k1 = param({2, 2, 6, 4}, 65);
  Var q2(q1.value().clone(), true), k2(k1.value().clone(), true);
  const Tensor weights = random_tensor({2, 2, 6, 6}, 66);
  Var fused = causal_attention_weights(q1, k1, s);
  Var composed = causal_softmax(scale(matmul(q2, k2, true), s));
  for (int64_t i = 0; i < fused.value().numel(); ++i) {
    EXPECT_NEAR(fused.value()[i], composed.value()[i], 1e-6) << "weight " << i;
    if (composed.value()[i] == 0.0f) {
      EXPECT_EQ(fused.value()[i], 0.0f) << "masked weight " << i;
    }
  }
  backward(weighted_sum_op(fused, weights));
  backward(weighted_sum_op(composed, weights));
  for (int64_t i = 0; i < q1.value().numel(); ++i) {
    EXPECT_NEAR(q1.grad()[i], q2.grad()[i], 1e-5) << "dq " << i;
    EXPECT_NEAR(k1.grad()[i], k2.grad()[i], 1e-5) << "dk " << i;
  }
}

// The composed attention the fused op stands for: split_qkv_heads, select,
// causal_attention_weights, matmul, merge_heads. w receives the weights.
Var composed_attention(const Var& qkv, int64_t H, const RopeTable* table, float s, Tensor* w) {
  Var heads = split_qkv_heads(qkv, H, table, 0);
  Var weights = causal_attention_weights(select(heads, 0), select(heads, 1), s);
  *w = weights.value();
  return merge_heads(matmul(weights, select(heads, 2)));
}

// Fused causal attention (kernels/fused_attention.h) against finite differences, with and without
// RoPE, into a qkv whose gradient an earlier backward already holds (the op must add), and
// against the composed ops on shapes whose T and d fill no vector and no block, on several
// blocks, and on the model's own (T 64, d 32): values, weights and gradients.
TEST_P(OpsGradTest, CausalAttentionMatchesFiniteDifferencesAndComposedOps) {
  const float s = 0.35f;
  const RopeTable table5 = make_rope_table(5, 4, 10000.0);
  check_gradients("causal_attention_rope", kCausalSoftmaxTol, {param({2, 5, 3 * 8}, 120)},
                  [&](const std::vector<Var>& in) { return causal_attention(in[0], 2, &table5, s); });
  check_gradients("causal_attention_learned", kCausalSoftmaxTol, {param({1, 5, 3 * 6}, 121)},
                  [&](const std::vector<Var>& in) { return causal_attention(in[0], 3, nullptr, s); });
  check_gradients("causal_attention_accumulating", kCausalSoftmaxTol, {param({1, 5, 3 * 8}, 122)},
                  [&](const std::vector<Var>& in) {
    return add(causal_attention(in[0], 2, &table5, s), scale(linear(in[0], Var(random_tensor({8, 24}, 123))), 0.5f));
  });

  struct Case {
    int64_t B, T, H, d;
    bool rope;
  };
  for (const Case& c : {Case{2, 6, 2, 4, true}, Case{1, 37, 3, 6, true}, Case{2, 21, 1, 10, false},
                        Case{2, 64, 2, 32, true}}) {
    SCOPED_TRACE("B " + std::to_string(c.B) + " T " + std::to_string(c.T) + " H " + std::to_string(c.H) + " d " +
                 std::to_string(c.d));
    const RopeTable table = make_rope_table(c.T, c.d, 10000.0);
    const RopeTable* t = c.rope ? &table : nullptr;
    const Tensor qkv_value = random_tensor({c.B, c.T, 3 * c.H * c.d}, 124);
    Var qkv1(qkv_value.clone(), true), qkv2(qkv_value.clone(), true);
    Tensor w1, w2;
    Var fused = causal_attention(qkv1, c.H, t, s, &w1);
    Var composed = composed_attention(qkv2, c.H, t, s, &w2);
    ASSERT_EQ(fused.shape(), composed.shape());
    for (int64_t i = 0; i < w1.numel(); ++i) {
      ASSERT_NEAR(w1[i], w2[i], 1e-6) << "weight " << i;
      if (w2[i] == 0.0f) {
        ASSERT_EQ(w1[i], 0.0f) << "masked weight " << i;
      }
    }
    for (int64_t i = 0; i < fused.value().numel(); ++i)
      ASSERT_NEAR(fused.value()[i], composed.value()[i], 1e-5) << "out " << i;
    const Tensor r = random_tensor(fused.shape(), 125);
    backward(weighted_sum_op(fused, r));
    backward(weighted_sum_op(composed, r));
    for (int64_t i = 0; i < qkv_value.numel(); ++i) ASSERT_NEAR(qkv1.grad()[i], qkv2.grad()[i], 1e-4) << "dqkv " << i;
    // Training asks for no weights: the backward makes them again, and must land on the
    // same bits as the backward that read the reader's copy.
    Var qkv3(qkv_value.clone(), true);
    Var remade = causal_attention(qkv3, c.H, t, s);
    backward(weighted_sum_op(remade, r));
    for (int64_t i = 0; i < fused.value().numel(); ++i)
      ASSERT_EQ(std::bit_cast<uint32_t>(remade.value()[i]), std::bit_cast<uint32_t>(fused.value()[i])) << "out " << i;
    for (int64_t i = 0; i < qkv_value.numel(); ++i)
      ASSERT_EQ(std::bit_cast<uint32_t>(qkv3.grad()[i]), std::bit_cast<uint32_t>(qkv1.grad()[i])) << "dqkv " << i;
  }
}

// residual + x W^T + b in one op, against finite differences and against add(residual, linear).
TEST_P(OpsGradTest, LinearResidualMatchesFiniteDifferencesAndComposedOps) {
  check_gradients("linear_residual", kLinearTol,
                  {param({2, 3, 4}, 70), param({2, 3, 5}, 71), param({4, 5}, 72), param({4}, 73)},
                  [](const std::vector<Var>& in) { return linear_residual(in[0], in[1], in[2], in[3]); });
  check_gradients("linear_residual_no_bias", kLinearTol, {param({6, 4}, 74), param({6, 5}, 75), param({4, 5}, 76)},
                  [](const std::vector<Var>& in) { return linear_residual(in[0], in[1], in[2]); });
  const Tensor r = random_tensor({6, 4}, 77), x = random_tensor({6, 5}, 78), w = random_tensor({4, 5}, 79);
  Var fused = linear_residual(Var(r), Var(x), Var(w));
  Var composed = add(Var(r), linear(Var(x), Var(w)));
  for (int64_t i = 0; i < fused.value().numel(); ++i) EXPECT_NEAR(fused.value()[i], composed.value()[i], 1e-5);
}

// The fused MLP on every backend (oneDNN's GEMM applies GELU's slope as a post-op): against
// finite differences, and values and gradients against linear -> gelu -> linear_residual.
TEST(OpsMlpTest, MlpResidualMatchesFiniteDifferencesAndComposedOps) {
  const GemmBackend saved = gemm_backend();
  for (GemmBackend backend : {GemmBackend::reference, GemmBackend::openblas, GemmBackend::onednn}) {
    SCOPED_TRACE(std::string(backend_name(backend)));
    set_gemm_backend(backend);
    check_gradients("mlp_residual", kGeluTol,
                    {param({2, 3, 4}, 90), param({2, 3, 4}, 91), param({6, 4}, 92, 0.5), param({6}, 93),
                     param({4, 6}, 94, 0.5), param({4}, 95)},
                    [](const std::vector<Var>& in) { return mlp_residual(in[0], in[1], in[2], in[3], in[4], in[5]); });
    check_gradients("mlp_residual_no_bias", kGeluTol,
                    {param({5, 4}, 96), param({5, 4}, 97), param({6, 4}, 98, 0.5), param({4, 6}, 99, 0.5)},
                    [](const std::vector<Var>& in) { return mlp_residual(in[0], in[1], in[2], Var(), in[3], Var()); });

    std::vector<Var> fused_in, composed_in;
    const std::vector<Shape> shapes{{3, 7, 8}, {3, 7, 8}, {32, 8}, {32}, {8, 32}, {8}};
    for (size_t i = 0; i < shapes.size(); ++i) {
      const Tensor t = random_tensor(shapes[i], 100 + i, 0.7);
      fused_in.emplace_back(t.clone(), true);
      composed_in.emplace_back(t.clone(), true);
    }
    const Var& r = composed_in[0];
    Var fused = mlp_residual(fused_in[0], fused_in[1], fused_in[2], fused_in[3], fused_in[4], fused_in[5]);
    Var composed = linear_residual(r, gelu(linear(composed_in[1], composed_in[2], composed_in[3])), composed_in[4],
                                   composed_in[5]);
    for (int64_t i = 0; i < fused.value().numel(); ++i)
      EXPECT_NEAR(fused.value()[i], composed.value()[i], 1e-5) << "out " << i;
    const Tensor weights = random_tensor(fused.shape(), 110);
    backward(weighted_sum_op(fused, weights));
    backward(weighted_sum_op(composed, weights));
    for (size_t which = 0; which < shapes.size(); ++which)
      for (int64_t i = 0; i < fused_in[which].value().numel(); ++i)
        EXPECT_NEAR(fused_in[which].grad()[i], composed_in[which].grad()[i], 1e-4) << "input " << which << " " << i;
  }
  set_gemm_backend(saved);
}

// The QKV projection and the heads' split with RoPE, against finite differences (through
// select, so the view op's backward is covered too) and against linear -> split_heads -> rope.
TEST_P(OpsGradTest, QkvProjectionAndSplitHeadsMatchFiniteDifferencesAndComposedOps) {
  constexpr int64_t H = 2, d = 4, D = H * d, T = 5;
  const RopeTable table = make_rope_table(T + 2, d, 10000.0);
  std::vector<Var> inputs{param({2, T, D}, 80), param({D, D}, 81, 0.5), param({D, D}, 82, 0.5),
                          param({D, D}, 83, 0.5)};
  check_gradients("qkv_projection", kLinearTol, inputs, [&](const std::vector<Var>& in) {
    return qkv_projection(in[0], in[1], in[2], in[3]);
  });
  check_gradients("split_qkv_heads_rope", kRopeTol, {param({2, T, 3 * D}, 84)}, [&](const std::vector<Var>& in) {
    return split_qkv_heads(in[0], H, &table, 2);
  });
  check_gradients("split_qkv_heads_select", kRopeTol, {param({2, T, 3 * D}, 85)}, [&](const std::vector<Var>& in) {
    Var heads = split_qkv_heads(in[0], H);
    return add(select(heads, 2), scale(select(heads, 0), -0.5f));  // k gets no gradient: stays 0
  });
  check_gradients("split_qkv_heads_accumulating", kRopeTol, {param({1, T, 3 * D}, 86)},
                  [&](const std::vector<Var>& in) {
    const Var other = split_heads(linear(in[0], Var(random_tensor({D, 3 * D}, 87))), H);
    return add(select(split_qkv_heads(in[0], H, &table, 1), 1), other);
  });

  Var fused = split_qkv_heads(qkv_projection(inputs[0], inputs[1], inputs[2], inputs[3]), H, &table, 2);
  const int64_t part = 2 * H * T * d;
  for (int64_t which = 0; which < 3; ++which) {
    Var composed = split_heads(linear(inputs[0], inputs[1 + which]), H);
    if (which < 2) composed = rope(composed, table, 2);
    for (int64_t i = 0; i < part; ++i)
      EXPECT_NEAR(fused.value()[which * part + i], composed.value()[i], 1e-5) << "part " << which << " element " << i;
  }
}

// The gradient rule: grad_out() tells the first writer to overwrite and every later one to
// add, so a step that mixes both is still a sum; zero_grad drops the gradient; grad()
// reads zeros where none was written; for_adding() zero-fills only a fresh buffer.
TEST(OpsGraphTest, ZeroGradDropsTheGradientAndGradOutOverwritesOnlyTheFirstWrite) {
  Var x(Tensor::from({3}, {1, 2, 3}), true);
  GradOut g = x.grad_out();
  EXPECT_FALSE(g.accumulate);  // never written: the caller overwrites
  EXPECT_EQ(g.numel, 3);
  g.data[0] = 5, g.data[1] = 6, g.data[2] = 7;
  g = x.grad_out();
  EXPECT_TRUE(g.accumulate);  // written this step: the caller adds
  EXPECT_EQ(g.for_adding()[1], 6.0f) << "for_adding keeps what was written";
  x.zero_grad();
  EXPECT_FALSE(x.has_grad());
  EXPECT_EQ(x.grad()[1], 0.0f) << "grad() after zero_grad reads zeros";
  x.zero_grad();
  g = x.grad_out();
  EXPECT_FALSE(g.accumulate) << "zeroed and untouched: the first write may overwrite";
  g.data[1] = 42.0f;
  g = {g.data, g.numel, false};
  EXPECT_EQ(g.for_adding()[1], 0.0f) << "for_adding zero-fills a buffer to be overwritten";

  // A linear layer's weight used twice: the first backward overwrites, the second adds.
  Var w = param({2, 3}, 67);
  Var in = param({4, 3}, 68);
  w.grad().fill(123.0f);  // stale garbage from an earlier step
  w.zero_grad();
  Var out = add(linear(in, w), linear(in, w));
  backward(weighted_sum_op(out, Tensor::full({4, 2}, 1.0f)));
  for (int64_t o = 0; o < 2; ++o)
    for (int64_t i = 0; i < 3; ++i) {
      double column_sum = 0.0;
      for (int64_t r = 0; r < 4; ++r) column_sum += in.value()[r * 3 + i];
      EXPECT_NEAR(w.grad()[o * 3 + i], 2.0 * column_sum, 1e-5);  // dW = 2 * ones^T in
    }
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

}  // namespace
}  // namespace mg
