// AdamW, the learning-rate schedule and gradient clipping against values worked out by
// hand (and checked with torch.optim.AdamW's formula in double).
#include <gtest/gtest.h>

#include <cmath>

#include "core/error.h"
#include "optim/adamw.h"

namespace mg {
namespace {

TEST(AdamWTest, TwoStepsMatchHandComputedValuesWithDecayOnMatricesOnly) {
  Parameters params;
  Var matrix = params.add("w", {1, 1});  // 2-D: decayed
  Var bias = params.add("b", {1});       // 1-D: never decayed
  matrix.value()[0] = 1.0f;
  bias.value()[0] = 1.0f;
  AdamW optimizer(params, {0.9, 0.99, 1e-8, 0.1});

  matrix.grad()[0] = 0.5f;
  bias.grad()[0] = 0.5f;
  optimizer.step(0.1);
  EXPECT_NEAR(matrix.value()[0], 0.890000002, 1e-6);  // 1 * (1 - 0.1*0.1) - 0.1 * 0.5/0.5
  EXPECT_NEAR(bias.value()[0], 0.900000002, 1e-6);
  // The moments are held under the parameter's name (checkpoints store them so).
  EXPECT_NEAR(optimizer.state("w").exp_avg[0], 0.05, 1e-7);
  EXPECT_NEAR(optimizer.state("w").exp_avg_sq[0], 0.0025, 1e-8);
  EXPECT_NEAR(optimizer.state("b").exp_avg[0], 0.05, 1e-7);
  EXPECT_THROW(optimizer.state("c"), InternalError);

  matrix.grad()[0] = -0.25f;
  bias.grad()[0] = -0.25f;
  optimizer.step(0.1);
  EXPECT_NEAR(matrix.value()[0], 0.8544300597, 1e-6);
  EXPECT_NEAR(bias.value()[0], 0.8733300598, 1e-6);
  EXPECT_EQ(optimizer.steps_taken(), 2);
}

TEST(ScheduleTest, WarmsUpLinearlyFromANonZeroRateThenDecaysByCosineToMinLr) {
  const double lr = 1e-3, min_lr = 1e-4;
  EXPECT_DOUBLE_EQ(learning_rate(0, lr, min_lr, 10, 110), 1e-3 / 11);  // step 0 already trains
  EXPECT_DOUBLE_EQ(learning_rate(9, lr, min_lr, 10, 110), 1e-3 * 10 / 11);
  EXPECT_DOUBLE_EQ(learning_rate(10, lr, min_lr, 10, 110), 1e-3);
  EXPECT_NEAR(learning_rate(60, lr, min_lr, 10, 110), 5.5e-4, 1e-15);  // half way: cos = 0
  EXPECT_NEAR(learning_rate(35, lr, min_lr, 10, 110), 1e-4 + 0.5 * (1 + std::cos(M_PI / 4)) * 9e-4, 1e-15);
  EXPECT_DOUBLE_EQ(learning_rate(110, lr, min_lr, 10, 110), 1e-4);
  EXPECT_DOUBLE_EQ(learning_rate(0, lr, min_lr, 0, 100), 1e-3);  // no warm-up
}

TEST(ClipGradNormTest, ScalesToTheLimitOnlyWhenTheGlobalNormExceedsIt) {
  Parameters params;
  Var a = params.add("a", {2});
  Var b = params.add("b", {1, 1});
  a.grad()[0] = 3.0f;
  a.grad()[1] = 0.0f;
  b.grad()[0] = 4.0f;  // global norm 5 over both tensors
  EXPECT_DOUBLE_EQ(clip_grad_norm(params, 10.0), 5.0);
  EXPECT_FLOAT_EQ(a.grad()[0], 3.0f);
  EXPECT_DOUBLE_EQ(clip_grad_norm(params, 1.0), 5.0);
  EXPECT_NEAR(a.grad()[0], 0.6f, 1e-6);
  EXPECT_NEAR(b.grad()[0], 0.8f, 1e-6);
  EXPECT_NEAR(clip_grad_norm(params, 0.0), 1.0, 1e-6);  // 0 turns clipping off
}

}  // namespace
}  // namespace mg
