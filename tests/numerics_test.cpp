// Numerics at the extremes: softmax, causal softmax (plain and oneDNN) and the fused
// log-softmax/cross-entropy on logits of +-1e4, forward and backward, against a
// long-double log-sum-exp reference; a model whose head makes logits of ~1e4 keeps a
// finite loss and finite gradients; training with lr 10 and no warm-up keeps every loss,
// gradient norm and weight finite; sampling at temperature 1e-6 and 100 stays in range
// (1e-6 picks the arg-max, 100 is close to uniform).
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <map>
#include <vector>

#include "autograd/ops.h"
#include "autograd/var.h"
#include "config_support.h"
#include "inference/generate.h"
#include "inference/model_store.h"
#include "kernels/cross_entropy.h"
#include "kernels/softmax.h"
#include "model_support.h"
#include "test_support.h"
#include "train/train.h"

namespace mg {
namespace {

bool all_finite(const float* x, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    if (!std::isfinite(x[i])) return false;
  return true;
}

// softmax of one row in long double, max-subtracted.
std::vector<long double> reference_softmax(const float* x, int64_t n) {
  long double max = x[0], sum = 0;
  for (int64_t i = 1; i < n; ++i) max = std::max<long double>(max, x[i]);
  std::vector<long double> p(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) sum += p[i] = std::exp(static_cast<long double>(x[i]) - max);
  for (auto& v : p) v /= sum;
  return p;
}

// Rows mixing +-1e4 with ordinary values: naive exp(1e4) is inf, exp(-1e4) is 0.
const std::vector<float> kExtremeLogits = {1e4f, -1e4f, 0.0f,  3.0f,   // row 0
                                           -1e4f, -1e4f, -1e4f, -1e4f,  // row 1: all equal
                                           -1e4f, 1e4f, 1e4f - 1, 2.0f,  // row 2: two near the top
                                           -1e4f, -9999.0f, -1e4f, 5.0f};  // row 3

TEST(NumericsTest, CrossEntropyOfLogitsPlusMinus1e4IsFiniteAndExactForwardAndBackward) {
  const int64_t rows = 4, V = 4;
  for (int32_t target = 0; target < V; ++target) {
    const std::vector<int32_t> targets(rows, target);
    std::vector<float> probs(rows * V), dlogits(rows * V, 0.0f);
    const double loss = cross_entropy_forward(probs.data(), kExtremeLogits.data(), targets.data(), rows, V);
    cross_entropy_backward(dlogits.data(), probs.data(), targets.data(), rows, V, 1.0f);
    long double expected = 0;
    for (int64_t r = 0; r < rows; ++r) {
      const float* l = kExtremeLogits.data() + r * V;
      const auto p = reference_softmax(l, V);
      long double max = l[0];
      for (int64_t v = 1; v < V; ++v) max = std::max<long double>(max, l[v]);
      long double sum = 0;
      for (int64_t v = 0; v < V; ++v) sum += std::exp(static_cast<long double>(l[v]) - max);
      expected += (max + std::log(sum) - l[target]) / rows;  // log-sum-exp - logit
      for (int64_t v = 0; v < V; ++v) {
        const long double d = (p[v] - (v == target ? 1 : 0)) / rows;
        EXPECT_NEAR(dlogits[r * V + v], static_cast<double>(d), 1e-6) << "row " << r << " v " << v;
      }
    }
    ASSERT_TRUE(std::isfinite(loss));
    EXPECT_NEAR(loss, static_cast<double>(expected), 1e-6 * std::max(1.0L, std::fabs(expected))) << target;
    EXPECT_TRUE(all_finite(probs.data(), rows * V));
    EXPECT_TRUE(all_finite(dlogits.data(), rows * V));
  }
  // A target 2e4 below the top costs 2e4 nats, not inf.
  const std::vector<int32_t> low = {1, 0, 0, 0};
  std::vector<float> probs(16);
  const double loss = cross_entropy_forward(probs.data(), kExtremeLogits.data(), low.data(), 1, 4);
  EXPECT_DOUBLE_EQ(loss, 2e4);
}

// Every causal softmax implementation, forward and backward, on scores of +-1e4.
TEST(NumericsTest, CausalSoftmaxOfScoresPlusMinus1e4MatchesTheReference) {
  const int64_t batch = 2, T = 4;
  std::vector<float> scores(batch * T * T), dweights(batch * T * T);
  for (size_t i = 0; i < scores.size(); ++i) {
    scores[i] = (i % 3 == 0 ? 1e4f : i % 3 == 1 ? -1e4f : 0.5f * static_cast<float>(i));
    dweights[i] = std::sin(0.7f * static_cast<float>(i));
  }
  using Forward = void (*)(float*, const float*, int64_t, int64_t, int64_t);
  using Backward = void (*)(float*, const float*, const float*, int64_t, int64_t, int64_t, float, bool);
  const std::vector<std::tuple<const char*, Forward, Backward>> kernels = {
      {"plain", causal_softmax_forward, causal_softmax_backward}};
  for (const auto& [name, forward, backward] : kernels) {
    std::vector<float> w(scores.size()), ds(scores.size(), 0.0f);
    forward(w.data(), scores.data(), batch, T, T);
    backward(ds.data(), dweights.data(), w.data(), batch, T, T, 1.0f, true);
    ASSERT_TRUE(all_finite(w.data(), batch * T * T)) << name;
    ASSERT_TRUE(all_finite(ds.data(), batch * T * T)) << name;
    for (int64_t r = 0; r < batch * T; ++r) {
      const int64_t visible = r % T + 1;
      const auto p = reference_softmax(scores.data() + r * T, visible);
      long double dot = 0;
      for (int64_t k = 0; k < visible; ++k) dot += p[k] * dweights[r * T + k];
      for (int64_t k = 0; k < T; ++k) {
        const double want_w = k < visible ? static_cast<double>(p[k]) : 0.0;
        const double want_ds = k < visible ? static_cast<double>(p[k] * (dweights[r * T + k] - dot)) : 0.0;
        EXPECT_NEAR(w[r * T + k], want_w, 1e-6) << name << " row " << r << " key " << k;
        EXPECT_NEAR(ds[r * T + k], want_ds, 1e-6) << name << " row " << r << " key " << k;
      }
    }
  }
}

// Through the autograd graph: the Var ops give finite values and gradients too.
TEST(NumericsTest, AutogradSoftmaxAndCrossEntropyKeepGradientsFiniteAt1e4) {
  Var logits(Tensor::from({4, 4}, kExtremeLogits), /*requires_grad=*/true);
  const std::vector<int32_t> targets = {1, 2, 0, 3};
  Var loss = cross_entropy(logits, targets);
  backward(loss);
  ASSERT_TRUE(std::isfinite(loss.value()[0]));
  EXPECT_GT(loss.value()[0], 1e3f);  // row 0's target sits 2e4 below its top
  EXPECT_TRUE(all_finite(logits.grad().data(), 16));

  Var scores(Tensor::from({1, 4, 4}, kExtremeLogits), /*requires_grad=*/true);
  Var weights = causal_softmax(scores);
  Var total = cross_entropy(weights, std::vector<int32_t>{0, 1, 1, 2});
  backward(total);
  EXPECT_TRUE(all_finite(weights.value().data(), 16));
  EXPECT_TRUE(all_finite(scores.grad().data(), 16));
}

// A model whose head is scaled up so its logits reach ~1e4: loss and every gradient finite.
TEST(NumericsTest, ModelWithLogitsNear1e4HasFiniteLossAndGradients) {
  Gpt model = test::small_model(2, 16, 8, 11, 3);
  Tensor& head = model.parameters().get("head.weight").value();
  for (int64_t i = 0; i < head.numel(); ++i) head[i] *= 2e4f;  // 0.02 std -> ~400 per weight
  std::vector<int32_t> ids(2 * 8), targets(2 * 8);
  for (size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<int32_t>(i * 5 % 11), targets[i] = static_cast<int32_t>(i * 3 % 11);
  float largest = 0;
  {
    NoGradGuard no_grad;
    Tensor logits = model.forward(ids, 2, 8).value();
    for (int64_t i = 0; i < logits.numel(); ++i) largest = std::max(largest, std::fabs(logits[i]));
  }
  EXPECT_GT(largest, 1e3f);  // the premise: logits far beyond exp's float range
  Var loss = model.loss(ids, targets, 2, 8);
  backward(loss);
  ASSERT_TRUE(std::isfinite(loss.value()[0]));
  for (const auto& p : model.parameters().all()) {
    Var var = p.var;
    ASSERT_TRUE(all_finite(var.grad().data(), var.grad().numel())) << p.name;
  }
}

// lr 10 with no warm-up: the first step runs at the full rate; every logged loss and
// gradient norm, and every weight of the final checkpoint, stays finite.
TEST(NumericsTest, TrainingAtLearningRate10WithoutWarmupStaysFinite) {
  const auto dir = test::fresh_dir("numerics-lr10");
  std::string text;
  for (int i = 0; i < 3000; ++i) text += "abcde fghij\n"[(i * 7 + i / 13) % 12];
  std::ofstream(dir / "corpus.txt", std::ios::binary) << text;
  TrainRequest request;
  request.config = test::tiny_config(dir / "run");
  request.config.data.path = (dir / "corpus.txt").string();
  request.config.data.probe_path = "";
  request.config.train.lr = 10;
  request.config.train.min_lr = 1;
  request.config.train.warmup_steps = 0;
  request.config.train.max_steps = 30;
  request.config.train.eval_interval = 10;
  request.config.train.checkpoint_interval = 10;
  request.config.train.threads = 1;
  std::vector<TrainProgress> steps;
  request.on_progress = [&](const TrainProgress& p) { steps.push_back(p); };
  const TrainResult result = train(request);
  ASSERT_EQ(result.step, 30);
  ASSERT_EQ(steps.size(), 30u);
  EXPECT_DOUBLE_EQ(steps.front().lr, 10.0);  // no warm-up: the full rate from step 1
  for (const TrainProgress& p : steps) {
    EXPECT_TRUE(std::isfinite(p.loss)) << "step " << p.step;
    EXPECT_TRUE(std::isfinite(p.grad_norm)) << "step " << p.step;
    if (p.val_loss) {
      EXPECT_TRUE(std::isfinite(*p.val_loss)) << "step " << p.step;
    }
  }
  const LoadedModel saved = load_model(dir / "run" / "latest.safetensors");
  for (const auto& [name, tensor] : saved.checkpoint.tensors)
    EXPECT_TRUE(all_finite(tensor.data(), tensor.numel())) << name;
  std::filesystem::remove_all(dir);
}

// Temperature 1e-6 divides logit gaps by 1e-6 (exp of -1e6): the arg-max must win, with
// no NaN from 0/0; temperature 100 flattens the distribution towards uniform.
TEST(NumericsTest, SamplingAtTemperature1e6AndHundredStaysInRange) {
  const std::vector<float> logits = {0.1f, 2.0f, -3.0f, 1.999f, 0.0f};
  Rng rng(17);
  SamplingSettings cold;
  cold.temperature = 1e-6;
  for (int i = 0; i < 200; ++i) ASSERT_EQ(choose_symbol(logits, cold, rng), 1);
  // Even logits of +-1e4 at temperature 1e-6 give the arg-max.
  const std::vector<float> extreme = {-1e4f, 1e4f, 0.0f};
  for (int i = 0; i < 50; ++i) ASSERT_EQ(choose_symbol(extreme, cold, rng), 1);

  SamplingSettings hot;
  hot.temperature = 100;
  std::map<int32_t, int> counts;
  const int draws = 20000;
  for (int i = 0; i < draws; ++i) {
    const int32_t id = choose_symbol(logits, hot, rng);
    ASSERT_GE(id, 0);
    ASSERT_LT(id, 5);
    ++counts[id];
  }
  // p_v = softmax(l / 100): every symbol between 0.19 and 0.21; allow 4 sigma (~0.012).
  const auto p = reference_softmax(std::vector<float>{0.001f, 0.02f, -0.03f, 0.01999f, 0.0f}.data(), 5);
  for (int32_t v = 0; v < 5; ++v)
    EXPECT_NEAR(counts[v] / double(draws), static_cast<double>(p[v]), 0.012) << v;
}

}  // namespace
}  // namespace mg
