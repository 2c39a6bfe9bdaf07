// inspect-heads --next-symbol's technique (interp/next_symbol.h) and the distribution it
// shares with `sample` (inference/generate.h's sampling_distribution): known answers on
// hand-made logits, and the technique on tests/fixtures/heads_ref.safetensors against a
// forward of the model written out here.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "autograd/var.h"
#include "core/error.h"
#include "inference/generate.h"
#include "inference/model_store.h"
#include "interp/next_symbol.h"
#include "test_support.h"

namespace mg {
namespace {

TEST(SamplingDistribution, SoftmaxOverTheTopKThenTheNucleus) {
  const std::vector<float> logits = {0.0f, 2.0f, 1.0f, 0.0f};
  SamplingDistribution d;
  sampling_distribution(logits, SamplingSettings{}, d);
  EXPECT_EQ(d.order, (std::vector<int32_t>{1, 2, 0, 3}));  // a tie: the lower id first
  const double z = 1.0 + std::exp(-1.0) + 2.0 * std::exp(-2.0);
  EXPECT_DOUBLE_EQ(d.probability_at(0), 1.0 / z);
  EXPECT_DOUBLE_EQ(d.probability_at(1), std::exp(-1.0) / z);
  EXPECT_DOUBLE_EQ(d.probability_at(3), std::exp(-2.0) / z);
  EXPECT_EQ(d.mass, 1.0);

  sampling_distribution(logits, SamplingSettings{0.5, 2, 1.0}, d);  // temperature 0.5, the top 2
  const double z2 = 1.0 + std::exp(-2.0);
  EXPECT_DOUBLE_EQ(d.probability_at(0), 1.0 / z2);
  EXPECT_DOUBLE_EQ(d.probability_at(1), std::exp(-2.0) / z2);
  EXPECT_EQ(d.probability_at(2), 0.0);

  // top_p 0.7: 1/z = 0.576 < 0.7, with the second 0.788 >= 0.7: two kept, renormalised.
  sampling_distribution(logits, SamplingSettings{1.0, 0, 0.7}, d);
  EXPECT_EQ(d.kept, 2);
  EXPECT_DOUBLE_EQ(d.mass, 1.0 / z + std::exp(-1.0) / z);
  EXPECT_NEAR(d.probability_at(0) + d.probability_at(1), 1.0, 1e-15);
  EXPECT_EQ(d.probability_at(2), 0.0);

  sampling_distribution(logits, SamplingSettings{0.0, 0, 1.0}, d);  // greedy: all on the arg-max
  EXPECT_EQ(d.order[0], 1);
  EXPECT_EQ(d.probability_at(0), 1.0);
  EXPECT_EQ(d.probability_at(1), 0.0);
}

TEST(SamplingDistribution, SampleDrawsOnlyFromTheNucleus) {
  const std::vector<float> logits = {0.0f, 2.0f, 1.0f, 0.0f};
  Rng rng(7);
  int drawn[4] = {0, 0, 0, 0};
  for (int i = 0; i < 2000; ++i) ++drawn[choose_symbol(logits, SamplingSettings{1.0, 0, 0.7}, rng)];
  EXPECT_EQ(drawn[0] + drawn[3], 0);
  EXPECT_GT(drawn[1], drawn[2]);  // 0.73 against 0.27 of the nucleus
  EXPECT_GT(drawn[2], 300);
}

TEST(NextSymbol, TheModelsLastRowThroughTheDistribution) {
  const LoadedModel m = load_model((test::source_dir() / "tests" / "fixtures" / "heads_ref.safetensors").string());
  const std::u32string text = U"小丁拿着红色的苹果";
  NextSymbolQuery q;
  q.position = 4;
  q.sampling = SamplingSettings{0.8, 5, 0.9};
  const NextSymbols n = next_symbols(m.model, m.vocab, text, q);
  // The second implementation: the forward's logits at position 4, softmax by hand.
  const std::vector<int32_t> ids = m.vocab.encode(text, "text");
  NoGradGuard no_grad;
  const Tensor logits = m.model.forward(ids, 1, static_cast<int64_t>(ids.size())).value();
  const int64_t V = m.vocab.size();
  const float* row = logits.data() + 4 * V;
  std::vector<int32_t> order(static_cast<size_t>(V));
  for (int32_t i = 0; i < V; ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) { return row[a] > row[b]; });
  std::vector<double> p(5);
  double sum = 0.0;
  for (int k = 0; k < 5; ++k) sum += p[k] = std::exp((row[order[k]] - row[order[0]]) / 0.8);
  double mass = 0.0;
  int kept = 0;
  while (kept < 5 && mass < 0.9) mass += p[kept++] / sum;
  ASSERT_EQ(n.top.size(), std::min<size_t>(10, static_cast<size_t>(V)));
  for (int k = 0; k < static_cast<int>(n.top.size()); ++k) {
    EXPECT_EQ(n.top[k].id, order[k]);
    EXPECT_EQ(n.top[k].logit, row[order[k]]);
    EXPECT_NEAR(n.top[k].probability, k < kept ? p[k] / sum / mass : 0.0, 1e-12) << "rank " << k;
  }
  EXPECT_EQ(n.answer.id, order[0]);
  EXPECT_EQ(n.against.id, order[1]);
  // The job's arguments named in its refusals.
  q.sampling.top_p = 0.0;
  try {
    next_symbols(m.model, m.vocab, text, q);
    FAIL() << "top_p 0 accepted";
  } catch (const ArgumentError& e) {
    EXPECT_EQ(e.argument(), "top_p");
  }
}

}  // namespace
}  // namespace mg
