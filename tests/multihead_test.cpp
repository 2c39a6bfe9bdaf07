// The checks of lesson 12 (multi-head attention) on our ops: where split_heads puts each
// coordinate, why the axis swap matters, that a width not divisible by the head count is
// refused, that all heads at once equal a loop over single heads built from slices of
// the projection weights, and that scores are scaled by 1/sqrt(d), the head width.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "autograd/ops.h"
#include "core/error.h"

namespace mg {
namespace {

// 0, 1, 2, ... laid out as shape: labels that show where each coordinate ends up.
Tensor counting(Shape shape, float step = 1.0f) {
  Tensor t = Tensor::empty(std::move(shape));
  for (int64_t i = 0; i < t.numel(); ++i) t[i] = step * static_cast<float>(i);
  return t;
}

Tensor random_tensor(Shape shape, uint64_t seed, double scale) {
  Rng rng(seed);
  Tensor t = Tensor::empty(std::move(shape));
  for (int64_t i = 0; i < t.numel(); ++i) t[i] = static_cast<float>(scale * rng.normal());
  return t;
}

// Rows [begin, end) of m [R,C] -> [end-begin, C].
Tensor row_slice(const Tensor& m, int64_t begin, int64_t end) {
  const int64_t C = m.dim(1);
  Tensor out = Tensor::empty({end - begin, C});
  for (int64_t r = begin; r < end; ++r)
    for (int64_t c = 0; c < C; ++c) out[(r - begin) * C + c] = m[r * C + c];
  return out;
}

// Columns [begin, end) of m [R,C] -> [R, end-begin].
Tensor column_slice(const Tensor& m, int64_t begin, int64_t end) {
  const int64_t R = m.dim(0), C = m.dim(1), W = end - begin;
  Tensor out = Tensor::empty({R, W});
  for (int64_t r = 0; r < R; ++r)
    for (int64_t c = 0; c < W; ++c) out[r * W + c] = m[r * C + begin + c];
  return out;
}

TEST(MultiheadTest, SplitHeadsOfZeroToElevenGivesEachHeadEveryPosition) {
  Var x(counting({1, 3, 4}));  // [B,T,D] = [1,3,4]
  Var heads = split_heads(x, 2);
  ASSERT_EQ(heads.shape(), (Shape{1, 2, 3, 2}));  // [B,H,T,d]
  // Head 0 holds the first two features of every position, head 1 the last two.
  const std::vector<float> expected{0, 1, 4, 5, 8, 9, /* head 1 */ 2, 3, 6, 7, 10, 11};
  for (int64_t i = 0; i < 12; ++i) EXPECT_EQ(heads.value()[i], expected[i]) << "flat index " << i;
  EXPECT_EQ(heads.value().at({0, 0, 1, 0}), 4.0f);
  EXPECT_EQ(heads.value().at({0, 0, 1, 1}), 5.0f);
  EXPECT_EQ(heads.value().at({0, 1, 1, 0}), 6.0f);
  EXPECT_EQ(heads.value().at({0, 1, 1, 1}), 7.0f);

  Var merged = merge_heads(heads);
  ASSERT_EQ(merged.shape(), (Shape{1, 3, 4}));
  for (int64_t i = 0; i < 12; ++i) EXPECT_EQ(merged.value()[i], x.value()[i]);
}

TEST(MultiheadTest, ReshapeWithoutTheAxisSwapHasTheRightShapeButWrongContents) {
  Var x(counting({1, 2, 4}));  // two positions and two heads: shapes alone cannot tell
  Var correct = split_heads(x, 2);
  Tensor naive = x.value().reshape({1, 2, 2, 2});  // [B,T,H,d] read as if it were [B,H,T,d]
  ASSERT_EQ(correct.shape(), naive.shape());
  EXPECT_EQ(correct.value().at({0, 0, 1, 0}), 4.0f);
  EXPECT_EQ(correct.value().at({0, 0, 1, 1}), 5.0f);
  EXPECT_EQ(naive.at({0, 0, 1, 0}), 2.0f);
  EXPECT_EQ(naive.at({0, 0, 1, 1}), 3.0f);
}

TEST(MultiheadTest, WidthNotDivisibleByHeadCountThrowsInsteadOfDroppingACoordinate) {
  Var x(counting({1, 3, 5}));
  try {
    split_heads(x, 2);
    FAIL() << "split_heads of width 5 into 2 heads did not throw";
  } catch (const ShapeError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("D=5"), std::string::npos) << msg;
    EXPECT_NE(msg.find("H=2"), std::string::npos) << msg;
  }
  EXPECT_THROW(split_heads(x, 0), ShapeError);
  EXPECT_EQ(split_heads(x, 5).shape(), (Shape{1, 5, 3, 1}));  // 5 heads of width 1 is fine
}

// One attention layer without RoPE, all heads at once: [B,H,T,d] through batched matmuls.
struct AllHeads {
  Var weights;  // [B,H,T,T]
  Var context;  // [B,H,T,d]
  Var out;      // [B,T,D]
};
AllHeads attend_all_heads(const Var& x, const Var& Wq, const Var& Wk, const Var& Wv, const Var& Wo, int64_t H,
                          float score_scale) {
  Var q = split_heads(linear(x, Wq), H);
  Var k = split_heads(linear(x, Wk), H);
  Var v = split_heads(linear(x, Wv), H);
  Var w = causal_softmax(scale(matmul(q, k, true), score_scale));
  Var context = matmul(w, v);
  return {w, context, linear(merge_heads(context), Wo)};
}

TEST(MultiheadTest, AllHeadsAtOnceEqualLoopOverSingleHeadsFromWeightSlices) {
  constexpr int64_t B = 2, T = 5, D = 8, H = 2, d = D / H;
  const Var x(random_tensor({B, T, D}, 1, 1.0));
  const Var Wq(random_tensor({D, D}, 2, 0.5)), Wk(random_tensor({D, D}, 3, 0.5));
  const Var Wv(random_tensor({D, D}, 4, 0.5)), Wo(random_tensor({D, D}, 5, 0.5));
  const float score_scale = 1.0f / std::sqrt(static_cast<float>(d));
  const AllHeads all = attend_all_heads(x, Wq, Wk, Wv, Wo, H, score_scale);

  // Head h owns rows [h d, (h+1) d) of Wq, Wk, Wv (its output features) and columns
  // [h d, (h+1) d) of Wo (where its context lands after merge_heads). Wo's product with
  // the merged context is the sum over heads of each head's share.
  Var out_sum;
  for (int64_t h = 0; h < H; ++h) {
    Var q = linear(x, Var(row_slice(Wq.value(), h * d, (h + 1) * d)));  // [B,T,d]
    Var k = linear(x, Var(row_slice(Wk.value(), h * d, (h + 1) * d)));
    Var v = linear(x, Var(row_slice(Wv.value(), h * d, (h + 1) * d)));
    Var w = causal_softmax(scale(matmul(q, k, true), score_scale));  // [B,T,T]
    Var context = matmul(w, v);                                      // [B,T,d]
    Var share = linear(context, Var(column_slice(Wo.value(), h * d, (h + 1) * d)));  // [B,T,D]
    out_sum = h == 0 ? share : add(out_sum, share);

    for (int64_t b = 0; b < B; ++b) {
      for (int64_t t = 0; t < T; ++t) {
        for (int64_t s = 0; s < T; ++s)
          EXPECT_NEAR(all.weights.value().at({b, h, t, s}), w.value().at({b, t, s}), 1e-6);
        for (int64_t j = 0; j < d; ++j)
          EXPECT_NEAR(all.context.value().at({b, h, t, j}), context.value().at({b, t, j}), 1e-5);
      }
    }
  }
  ASSERT_EQ(all.out.shape(), x.shape());
  for (int64_t i = 0; i < all.out.value().numel(); ++i)
    EXPECT_NEAR(all.out.value()[i], out_sum.value()[i], 1e-5) << "flat index " << i;
}

TEST(MultiheadTest, AttentionWeightRowsSumToOneWithExactZerosAboveTheDiagonal) {
  constexpr int64_t B = 2, T = 6, D = 8, H = 2;
  const Var x(random_tensor({B, T, D}, 6, 1.0));
  const AllHeads all = attend_all_heads(x, Var(random_tensor({D, D}, 7, 0.5)), Var(random_tensor({D, D}, 8, 0.5)),
                                        Var(random_tensor({D, D}, 9, 0.5)), Var(random_tensor({D, D}, 10, 0.5)), H,
                                        0.5f);
  for (int64_t b = 0; b < B; ++b) {
    for (int64_t h = 0; h < H; ++h) {
      for (int64_t t = 0; t < T; ++t) {
        double row_sum = 0.0;
        for (int64_t s = 0; s < T; ++s) {
          const float w = all.weights.value().at({b, h, t, s});
          if (s > t) EXPECT_EQ(w, 0.0f) << "future key " << s << " of query " << t;
          else EXPECT_GT(w, 0.0f);
          row_sum += w;
        }
        EXPECT_NEAR(row_sum, 1.0, 1e-6) << "b " << b << " h " << h << " t " << t;
      }
    }
  }
}

// The lesson's shapes: x = 0..11 (scaled by 0.1 so the weights are not one-hot), 2 heads of
// width 2. Each head's dot product has d = 2 terms, so scores are divided by sqrt(2), not
// by sqrt(4).
TEST(MultiheadTest, ScoresAreScaledByOneOverSqrtHeadWidthNotModelWidth) {
  constexpr int64_t T = 3, D = 4, H = 2, d = 2;
  const Var x(counting({1, T, D}, 0.1f));
  const Var Wq(random_tensor({D, D}, 11, 0.8)), Wk(random_tensor({D, D}, 12, 0.8));
  const Var Wv(random_tensor({D, D}, 13, 0.8)), Wo(random_tensor({D, D}, 14, 0.8));
  const AllHeads by_d = attend_all_heads(x, Wq, Wk, Wv, Wo, H, 1.0f / std::sqrt(static_cast<float>(d)));
  const AllHeads by_D = attend_all_heads(x, Wq, Wk, Wv, Wo, H, 1.0f / std::sqrt(static_cast<float>(D)));

  // By hand in double: q = x Wq^T, head h uses features [h d, (h+1) d).
  auto project = [&](const Tensor& W, int64_t t, int64_t j) {
    double sum = 0.0;
    for (int64_t i = 0; i < D; ++i) sum += static_cast<double>(x.value()[t * D + i]) * W[j * D + i];
    return sum;
  };
  double largest_difference = 0.0;
  for (int64_t h = 0; h < H; ++h) {
    for (int64_t t = 0; t < T; ++t) {
      std::vector<double> e(t + 1);
      double total = 0.0;
      for (int64_t s = 0; s <= t; ++s) {
        double score = 0.0;
        for (int64_t j = h * d; j < (h + 1) * d; ++j) score += project(Wq.value(), t, j) * project(Wk.value(), s, j);
        e[s] = std::exp(score / std::sqrt(static_cast<double>(d)));
        total += e[s];
      }
      for (int64_t s = 0; s <= t; ++s) {
        EXPECT_NEAR(by_d.weights.value().at({0, h, t, s}), e[s] / total, 1e-6) << "h " << h << " t " << t;
        largest_difference = std::max(
            largest_difference,
            std::abs(static_cast<double>(by_d.weights.value().at({0, h, t, s})) - by_D.weights.value().at({0, h, t, s})));
      }
    }
  }
  ::testing::Test::RecordProperty("largest_weight_difference", std::to_string(largest_difference));
  EXPECT_GT(largest_difference, 1e-2);  // the wrong width gives visibly different weights
}

}  // namespace
}  // namespace mg
