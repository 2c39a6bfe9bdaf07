// The arithmetic of data-parallel training, checked in one process (no MPI needed): the
// ranks' row shares tile the global batch, their (rows/B)-weighted losses and gradients
// add up to the whole batch's, and the shares of an evaluation add up to the whole
// evaluation. tests/mpi_train_test.cpp checks the same end to end under mpirun.
#include <gtest/gtest.h>

#include <cmath>

#include "core/error.h"
#include "inference/evaluate.h"
#include "model_support.h"
#include "train/data_parallel.h"

namespace mg {
namespace {

TEST(DataParallelTest, RowSharesTileTheBatchContiguouslyAndDifferByAtMostOneRow) {
  for (int64_t B = 1; B <= 20; ++B)
    for (int n = 1; n <= B; ++n) {
      int64_t next = 0, smallest = B, largest = 0;
      for (int r = 0; r < n; ++r) {
        RowShare share = batch_rows(B, r, n);
        EXPECT_EQ(share.first, next) << "B " << B << " n " << n << " rank " << r;
        next += share.rows;
        smallest = std::min(smallest, share.rows);
        largest = std::max(largest, share.rows);
      }
      EXPECT_EQ(next, B);
      EXPECT_LE(largest - smallest, 1);
      EXPECT_GE(smallest, 1);
    }
  EXPECT_EQ(batch_rows(8, 1, 3).first, 2);  // 8 rows over 3 ranks: [0,2) [2,5) [5,8)
  EXPECT_EQ(batch_rows(8, 1, 3).rows, 3);
  EXPECT_THROW(batch_rows(2, 0, 3), InputError);
}

TEST(DataParallelTest, WeightedShareLossesAndGradientsSumToTheWholeBatchs) {
  Gpt model = test::small_model(/*n_layer=*/2, /*n_embd=*/16, /*block_size=*/6, /*vocab_size=*/13, /*seed=*/3);
  const int64_t B = 7, T = 6;
  Rng rng(11);
  std::vector<int32_t> ids(B * T), targets(B * T);
  for (auto& id : ids) id = static_cast<int32_t>(rng.uniform_int(13));
  for (auto& id : targets) id = static_cast<int32_t>(rng.uniform_int(13));

  auto gradients = [&](std::span<const int32_t> x, std::span<const int32_t> y, int64_t rows, double& loss) {
    model.parameters().zero_grad();
    Var l = model.loss(x, y, rows, T);
    loss = l.value()[0];
    backward(l);
    std::vector<double> flat;
    for (auto& p : model.parameters().all())
      for (float g : p.var.grad().span()) flat.push_back(g);
    return flat;
  };
  double whole_loss = 0.0;
  const std::vector<double> whole = gradients(ids, targets, B, whole_loss);

  for (int n : {2, 3}) {
    std::vector<double> summed(whole.size(), 0.0);
    double summed_loss = 0.0;
    for (int r = 0; r < n; ++r) {
      const RowShare share = batch_rows(B, r, n);
      const std::span<const int32_t> x(ids.data() + share.first * T, share.rows * T);
      const std::span<const int32_t> y(targets.data() + share.first * T, share.rows * T);
      double loss = 0.0;
      const std::vector<double> part = gradients(x, y, share.rows, loss);
      const double weight = static_cast<double>(share.rows) / static_cast<double>(B);
      summed_loss += weight * loss;
      for (size_t i = 0; i < part.size(); ++i) summed[i] += weight * part[i];
    }
    EXPECT_NEAR(summed_loss, whole_loss, 1e-6 * whole_loss) << n << " shares";
    double largest = 0.0;
    for (double g : whole) largest = std::max(largest, std::abs(g));
    for (size_t i = 0; i < whole.size(); ++i)
      ASSERT_NEAR(summed[i], whole[i], 1e-5 * largest) << n << " shares, gradient element " << i;
  }
}

TEST(DataParallelTest, SharesOfTheSampledValidationLossAddUpToTheWholeEvaluation) {
  Gpt model = test::small_model(/*n_layer=*/1, /*n_embd=*/8, /*block_size=*/8, /*vocab_size=*/11, /*seed=*/4);
  std::vector<int32_t> ids;
  for (int i = 0; i < 500; ++i) ids.push_back((i * 7 + i / 5) % 11);
  const TokenIds split = TokenIds::from_ids(ids, 11);
  const int64_t batches = 7;
  const double whole = sampled_loss(model, split, /*batch_size=*/4, batches, /*seed=*/21);
  for (int parts : {2, 3, 8}) {  // 8 > batches: some shares score nothing
    double total = 0.0;
    for (int part = 0; part < parts; ++part)
      total += sampled_loss_sum(model, split, 4, batches, 21, EvalShare{part, parts});
    EXPECT_NEAR(total / batches, whole, 1e-12 * whole) << parts << " parts";
  }
}

TEST(DataParallelTest, SharesOfTheProbeCountEachChunkOnce) {
  // head.weight = 0 makes every logit 0, so the arg-max is id 0 for every prompt: the
  // items answered by symbol id 0 (every third) are exactly the correct ones.
  Gpt model = test::small_model(/*n_layer=*/1, /*n_embd=*/8, /*block_size=*/8, /*vocab_size=*/4, /*seed=*/6);
  model.parameters().get("head.weight").value().fill(0.0f);
  const Vocab vocab = Vocab::from_text(U"abcd");
  std::vector<ProbeItem> probes;
  for (int i = 0; i < 100; ++i)  // 100 items: four chunks of one forward pass (32, 32, 32, 4)
    probes.push_back({std::u32string(1 + i % 5, U"abcd"[i % 4]), i % 3 == 0 ? U'a' : U'b', "test"});
  EXPECT_EQ(score_probe(model, vocab, probes).correct, 34);
  EXPECT_DOUBLE_EQ(score_probe(model, vocab, probes).accuracy(), 0.34);
  for (int parts : {2, 3, 5}) {
    int64_t total = 0;
    for (int part = 0; part < parts; ++part) {
      int64_t expected = 0;  // the items of the chunks c with c % parts == part
      for (int i = 0; i < 100; ++i)
        if ((i / 32) % parts == part && i % 3 == 0) ++expected;
      const int64_t count = score_probe(model, vocab, probes, EvalShare{part, parts}).correct;
      EXPECT_EQ(count, expected) << "part " << part << " of " << parts;
      total += count;
    }
    EXPECT_EQ(total, 34) << parts << " parts";
  }
}

}  // namespace
}  // namespace mg
