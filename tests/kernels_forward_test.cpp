// Known-answer tests of the element-wise kernels' forwards: GELU against erf in double,
// LayerNorm against a double computation, RoPE against a scalar loop of docs/model.md's formula,
// cross-entropy and the causal softmax on hand values and logits of 1e4, embedding rows,
// the element-wise loops and re-layouts against plain loops, and row reductions that give
// the same bits on one and two threads.
#include <gtest/gtest.h>

#include <algorithm>

#include <cmath>
#include <vector>

#include "autograd/ops.h"
#include "kernels/cross_entropy.h"
#include "kernels/elementwise.h"
#include "kernels/embedding.h"
#include "kernels/gelu.h"
#include "kernels/layernorm.h"
#include "kernels/rope.h"
#include "kernels/runtime.h"
#include "kernels/softmax.h"
#include "core/error.h"

namespace mg {
namespace {

Tensor random_tensor(Shape shape, uint64_t seed, double scale = 1.0, double shift = 0.0) {
  Rng rng(seed);
  Tensor t = Tensor::empty(std::move(shape));
  for (int64_t i = 0; i < t.numel(); ++i) t[i] = static_cast<float>(shift + scale * rng.normal());
  return t;
}


TEST(KernelForwardTest, GeluMatchesTheErfFormulaInDouble) {
  const std::vector<float> xs{-10.0f, -3.0f, -1.0f, -0.5f, -1e-3f, 0.0f, 1e-3f, 0.5f, 1.0f, 3.0f, 10.0f};
  std::vector<float> out(xs.size()), dx(xs.size(), 0.0f), ones(xs.size(), 1.0f);
  gelu_forward(out.data(), xs.data(), static_cast<int64_t>(xs.size()));
  gelu_backward(dx.data(), ones.data(), xs.data(), static_cast<int64_t>(xs.size()), true);
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
  gelu_backward(dx.data(), ones.data(), xs.data(), n, true);
  for (int64_t i = 0; i < n; ++i) {
    const double x = xs[i];
    const double cdf = 0.5 * std::erfc(-x / std::sqrt(2.0));
    const double pdf = std::exp(-0.5 * x * x) / std::sqrt(2.0 * M_PI);
    ASSERT_NEAR(out[i], x * cdf, 6e-7 + 1e-7 * std::abs(x * cdf)) << "x=" << x;
    ASSERT_NEAR(dx[i], cdf + x * pdf, 5e-7) << "x=" << x;
  }
}

// The fused MLP's kernel: the same values as gelu_forward, and as the slope the derivative
// gelu_backward applies, bit for bit, written in place over x too.
TEST(KernelForwardTest, GeluWithSlopeIsGeluAndItsDerivative) {
  constexpr int64_t n = 40001;
  std::vector<float> xs(n), out(n), dx(n, 0.0f), ones(n, 1.0f), fused(n), slope(n);
  for (int64_t i = 0; i < n; ++i) xs[i] = -20.0f + 40.0f * static_cast<float>(i) / (n - 1);
  gelu_forward(out.data(), xs.data(), n);
  gelu_backward(dx.data(), ones.data(), xs.data(), n, false);
  gelu_forward_with_slope(fused.data(), slope.data(), xs.data(), n);
  std::vector<float> in_place = xs, fused_in_place(n);
  gelu_forward_with_slope(fused_in_place.data(), in_place.data(), in_place.data(), n);
  for (int64_t i = 0; i < n; ++i) {
    ASSERT_EQ(fused[i], out[i]) << "x=" << xs[i];
    ASSERT_EQ(slope[i], dx[i]) << "x=" << xs[i];
    ASSERT_EQ(fused_in_place[i], out[i]) << "x=" << xs[i];
    ASSERT_EQ(in_place[i], dx[i]) << "x=" << xs[i];
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
// elementwise.h against plain loops, written (accumulate false, over garbage) and added
// (onto known values), on a shape past kParallelWork and one below it.
TEST(KernelForwardTest, ElementwiseKernelsAndRelayoutsMatchPlainLoops) {
  for (const int64_t rows : {600, 3}) {
    const int64_t cols = 64, n = rows * cols, B = 2, T = rows / 2 == 0 ? 1 : rows / 2, H = 4, d = 8;
    const Tensor a = random_tensor({rows, cols}, 80), m = random_tensor({rows, cols}, 81), bias = random_tensor({cols}, 82);
    for (const bool accumulate : {false, true}) {
      const float start = accumulate ? 0.5f : 1e30f;  // garbage a write must not read
      std::vector<float> got(n, start), want(n), got_cols(cols, start), want_cols(cols);
      const float base = accumulate ? 0.5f : 0.0f;
      add_scaled(got.data(), a.data(), 3.0f, n, accumulate);
      for (int64_t i = 0; i < n; ++i) want[i] = base + 3.0f * a[i];
      EXPECT_EQ(got, want) << "add_scaled";
      got.assign(n, start);
      multiply(got.data(), a.data(), m.data(), n, accumulate);
      for (int64_t i = 0; i < n; ++i) want[i] = base + a[i] * m[i];
      EXPECT_EQ(got, want) << "multiply";
      sum_rows(got_cols.data(), a.data(), rows, cols, accumulate);
      for (int64_t c = 0; c < cols; ++c) {  // row order within blocks of kSumRowsBlock, then block order
        float sum = 0.0f;
        for (int64_t r0 = 0; r0 < rows; r0 += kSumRowsBlock) {
          float block = 0.0f;
          for (int64_t r = r0; r < std::min(rows, r0 + kSumRowsBlock); ++r) block += a[r * cols + c];
          sum += block;
        }
        want_cols[c] = base + sum;
      }
      EXPECT_EQ(got_cols, want_cols) << "sum_rows";
      // [B,T,H,d] -> [B,H,T,d] (split_heads' move), rows of B*T*H*d = 64*T floats.
      const int64_t moved = B * T * H * d;
      std::vector<float> heads(moved, start), heads_want(moved);
      swap_middle_axes(heads.data(), a.data(), B, T, H, d, accumulate);
      for (int64_t b = 0; b < B; ++b)
        for (int64_t t = 0; t < T; ++t)
          for (int64_t h = 0; h < H; ++h)
            for (int64_t j = 0; j < d; ++j)
              heads_want[((b * H + h) * T + t) * d + j] = base + a[((b * T + t) * H + h) * d + j];
      EXPECT_EQ(heads, heads_want) << "swap_middle_axes";
    }
    std::vector<float> got(n), want(n);
    add_broadcast_rows(got.data(), a.data(), bias.data(), rows, cols);
    for (int64_t i = 0; i < n; ++i) want[i] = a[i] + bias[i % cols];
    EXPECT_EQ(got, want) << "add_broadcast_rows";
    add_broadcast_rows(got.data(), nullptr, bias.data(), rows, cols);
    for (int64_t i = 0; i < n; ++i) want[i] = bias[i % cols];
    EXPECT_EQ(got, want) << "add_broadcast_rows without a";
  }
  // y [B,T,3,H,d] -> heads [3,B,H,T,d] and back.
  const int64_t B = 2, T = 5, H = 3, d = 4, D = H * d;
  Tensor y = random_tensor({B, T, 3 * D}, 83);
  std::vector<float> heads(3 * B * T * D), back(3 * B * T * D);
  relayout_qkv(heads.data(), y.data(), nullptr, B, T, H, d, 0, true);
  for (int64_t part = 0; part < 3; ++part)
    for (int64_t b = 0; b < B; ++b)
      for (int64_t h = 0; h < H; ++h)
        for (int64_t t = 0; t < T; ++t)
          for (int64_t j = 0; j < d; ++j)
            ASSERT_EQ(heads[(((part * B + b) * H + h) * T + t) * d + j], y[(b * T + t) * 3 * D + part * D + h * d + j]);
  relayout_qkv(back.data(), heads.data(), nullptr, B, T, H, d, 0, false);
  for (int64_t i = 0; i < y.numel(); ++i) ASSERT_EQ(back[i], y[i]);
}

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
    std::vector<float> column_sums(D);
    sum_rows(column_sums.data(), dout.data(), rows, D, false);
    dw.insert(dw.end(), column_sums.begin(), column_sums.end());
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
