// Generation: the KV cache gives the logits of a full recomputation (within the block
// and past it), the context shift runs past the block only on RoPE models, sampling is
// reproducible, --stats names the mode, and bad input exits 2 with one line.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>

#include "config_support.h"
#include "core/error.h"
#include "data/utf8.h"
#include "inference/generate.h"
#include "model_support.h"
#include "test_support.h"
#include "train/train.h"

namespace mg {
namespace {

using test::run_mini_gpt;

Gpt small_model(const char* position) {
  return test::small_model(/*n_layer=*/2, /*n_embd=*/16, /*block_size=*/8, /*vocab_size=*/13, /*seed=*/21, position);
}

// Logits [V] of the last position of a full forward over ids (at positions 0..n-1).
std::vector<float> full_logits(const Gpt& model, const std::vector<int32_t>& ids) {
  NoGradGuard no_grad;
  const int64_t T = static_cast<int64_t>(ids.size()), V = model.config().vocab_size;
  Tensor all = model.forward(ids, 1, T).value();
  return std::vector<float>(all.data() + (T - 1) * V, all.data() + T * V);
}

TEST(GeneratorTest, CachedLogitsEqualFullRecomputationWithinAndPastTheBlock) {
  for (const char* position : {"rope", "learned"}) {
    Gpt model = small_model(position);
    const int64_t T = model.config().block_size;
    std::vector<int32_t> text = {3, 1, 4};
    Generator generator(model);
    generator.start(text);
    for (int step = 0; step < 3 * T; ++step) {  // well past block_size = 8
      const size_t from = text.size() > static_cast<size_t>(T) ? text.size() - T : 0;
      std::vector<int32_t> window(text.begin() + from, text.end());
      std::vector<float> expected = full_logits(model, window);
      auto got = generator.logits();
      ASSERT_EQ(got.size(), expected.size());
      for (size_t v = 0; v < expected.size(); ++v)
        ASSERT_NEAR(got[v], expected[v], 1e-5) << position << " step " << step << " symbol " << v;
      const int32_t next = static_cast<int32_t>((step * 5 + 2) % 13);
      text.push_back(next);
      generator.append(next);
    }
  }
}

// block_size 1 (issue 45): every symbol after the first shifts out the one cached position.
TEST(GeneratorTest, ContextShiftAtBlockSizeOneKeepsGoing) {
  Gpt model = test::small_model(/*n_layer=*/1, /*n_embd=*/16, /*block_size=*/1, /*vocab_size=*/13, /*seed=*/5, "rope");
  Generator generator(model, GenerationMode::context_shift);
  generator.start(std::vector<int32_t>{3});
  for (int32_t id : {1, 2, 3, 4, 5}) {
    generator.append(id);
    for (float logit : generator.logits()) ASSERT_TRUE(std::isfinite(logit)) << id;
  }
}

TEST(GeneratorTest, ContextShiftIsWindowModeWithinTheBlockAndKeepsGoingPastIt) {
  Gpt model = small_model("rope");
  const int64_t T = model.config().block_size;
  Generator window(model), shift(model, GenerationMode::context_shift);
  EXPECT_EQ(shift.mode(), GenerationMode::context_shift);
  const std::vector<int32_t> prompt = {3, 1, 4};
  window.start(prompt);
  shift.start(prompt);
  int64_t length = 3;  // symbols of the text so far
  bool differed = false;
  for (int step = 0; step < 4 * T; ++step, ++length) {
    auto a = window.logits(), b = shift.logits();
    for (size_t v = 0; v < a.size(); ++v) {
      ASSERT_TRUE(std::isfinite(b[v])) << "step " << step;
      if (length <= T) {  // the same cache so far
        ASSERT_EQ(a[v], b[v]) << "step " << step << " symbol " << v;
      }
      differed = differed || a[v] != b[v];
    }
    const int32_t next = static_cast<int32_t>((step * 7 + 1) % 13);
    window.append(next);
    shift.append(next);
  }
  EXPECT_TRUE(differed);  // past the block the two modes read different contexts
}

TEST(GeneratorTest, ContextShiftRefusesLearnedPositions) {
  Gpt model = small_model("learned");
  EXPECT_THROW(Generator(model, GenerationMode::context_shift), InputError);
}

TEST(ChooseSymbolTest, GreedyTakesTheLowestIdAmongTies) {
  Rng rng(1);
  std::vector<float> logits = {0.5f, 2.0f, -1.0f, 2.0f};
  EXPECT_EQ(choose_symbol(logits, {0.0, 0, 1.0}, rng), 1);
}

TEST(ChooseSymbolTest, CandidatesRankByLogitThenLowestIdWhateverTheSign) {
  // Ties (3 and 3; -0 and +0, which compare equal) go to the lower id; negative logits
  // rank below positive ones and among themselves by value: ranked 2, 4, 0, 1, 3, 5.
  const std::vector<float> logits = {-0.0f, 0.0f, 3.0f, -2.5f, 3.0f, -7.0f};
  Rng rng(9);
  std::vector<int> counts(6, 0);
  for (int i = 0; i < 3000; ++i) ++counts[choose_symbol(logits, {1.0, 1, 1.0}, rng)];
  EXPECT_EQ(counts[2], 3000);  // top-1 is the first of the two 3s
  std::fill(counts.begin(), counts.end(), 0);
  for (int i = 0; i < 3000; ++i) ++counts[choose_symbol(logits, {1.0, 3, 1.0}, rng)];
  EXPECT_EQ(counts[1] + counts[3] + counts[5], 0);  // top-3 is {2, 4, 0}: the -0 at id 0 first
  EXPECT_GT(counts[0], 20);  // p = e^-3 / (2 + e^-3) = 0.024: about 73 of 3000
  std::fill(counts.begin(), counts.end(), 0);
  for (int i = 0; i < 20000; ++i) ++counts[choose_symbol(logits, {1.0, 5, 1.0}, rng)];
  EXPECT_EQ(counts[5], 0);  // -7 is last
  EXPECT_GT(counts[3], 0);  // -2.5 is fifth: p = e^-5.5 / (2 + 2 e^-3 + e^-5.5) = 0.002, about 39 draws
}

TEST(ChooseSymbolTest, TopKAndTopPOnlyEverPickAllowedSymbols) {
  std::vector<float> logits = {1.0f, 3.0f, 2.0f, 0.0f, 2.9f};  // order: 1, 4, 2, 0, 3
  Rng rng(4);
  std::vector<int> counts(5, 0);
  for (int i = 0; i < 4000; ++i) ++counts[choose_symbol(logits, {1.0, 2, 1.0}, rng)];
  EXPECT_EQ(counts[0] + counts[2] + counts[3], 0);
  EXPECT_GT(counts[1], 1500);
  EXPECT_GT(counts[4], 1500);
  // Probabilities: 1 -> 0.41, 4 -> 0.37, 2 -> 0.15, ...; p = 0.5 keeps symbols 1 and 4.
  std::fill(counts.begin(), counts.end(), 0);
  for (int i = 0; i < 4000; ++i) ++counts[choose_symbol(logits, {1.0, 0, 0.5}, rng)];
  EXPECT_EQ(counts[0] + counts[2] + counts[3], 0);
  // Temperature 1 sampling follows the softmax: symbol 1 about 41% of the time.
  std::fill(counts.begin(), counts.end(), 0);
  for (int i = 0; i < 20000; ++i) ++counts[choose_symbol(logits, {1.0, 0, 1.0}, rng)];
  double z = 0;
  for (float l : logits) z += std::exp(l);
  EXPECT_NEAR(counts[1] / 20000.0, std::exp(3.0) / z, 0.015);
}

class SampleCliTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new std::filesystem::path(test::fresh_dir("sample"));
    TrainRequest request;
    request.config = test::tiny_config(*dir_ / "run");
    request.config.train.max_steps = 30;
    train(request);
    checkpoint_ = (*dir_ / "run" / "latest.safetensors").string();
    request.config = test::tiny_config(*dir_ / "learned");
    request.config.model.position = PositionType::learned;
    request.config.train.max_steps = 5;
    train(request);
    learned_checkpoint_ = (*dir_ / "learned" / "latest.safetensors").string();
  }
  static void TearDownTestSuite() {
    std::filesystem::remove_all(*dir_);
    delete dir_;
  }
  static test::CommandResult sample(std::vector<std::string> extra) {
    std::vector<std::string> args = {"sample", "--checkpoint", checkpoint_};
    args.insert(args.end(), extra.begin(), extra.end());
    return run_mini_gpt(args, *dir_);
  }
  static void expect_usage_error(const test::CommandResult& r, const std::string& needle) {
    EXPECT_EQ(r.status, 2) << r.err;
    EXPECT_EQ(r.err.rfind("mini-gpt: error: ", 0), 0u) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_NE(r.err.find(needle), std::string::npos) << "missing \"" << needle << "\" in: " << r.err;
  }
  static std::filesystem::path* dir_;
  static std::string checkpoint_, learned_checkpoint_;
};
std::filesystem::path* SampleCliTest::dir_ = nullptr;
std::string SampleCliTest::checkpoint_;
std::string SampleCliTest::learned_checkpoint_;

TEST_F(SampleCliTest, SameSeedSameBytesOnEveryThreadCountAndOtherSeedsDiffer) {
  auto a = sample({"--prompt", "小丁", "--seed", "11", "--max-new-tokens", "150", "--threads", "1"});
  auto b = sample({"--prompt", "小丁", "--seed", "11", "--max-new-tokens", "150", "--threads", "2"});
  auto c = sample({"--prompt", "小丁", "--seed", "12", "--max-new-tokens", "150"});
  ASSERT_EQ(a.status, 0) << a.err;
  EXPECT_EQ(a.out, b.out);
  EXPECT_NE(a.out, c.out);
  EXPECT_EQ(a.out.rfind("小丁", 0), 0u);  // the prompt comes first
  EXPECT_EQ(decode_utf8(a.out, "stdout").size(), 2u + 150u + 1u);  // prompt, symbols, final newline
}

TEST_F(SampleCliTest, GreedyIgnoresTheSeedAndCacheChangesNothing) {
  auto a = sample({"--temperature", "0", "--seed", "1", "--max-new-tokens", "80"});
  auto b = sample({"--temperature", "0", "--seed", "2", "--max-new-tokens", "80", "--no-cache"});
  ASSERT_EQ(a.status, 0) << a.err;
  EXPECT_EQ(a.out, b.out);
}

TEST_F(SampleCliTest, NumSamplesAreSeparatedAndStatsGoToStderr) {
  auto r = sample({"--num-samples", "3", "--seed", "5", "--max-new-tokens", "10", "--stats"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("=== sample 3 of 3 ==="), std::string::npos);
  EXPECT_NE(r.err.find("symbols/s"), std::string::npos);
  EXPECT_NE(r.err.find("time to first symbol"), std::string::npos);
}

TEST_F(SampleCliTest, StatsNameTheModeAndContextShiftRunsPastTheBlock) {
  // configs/tiny.json: block_size 16, so 100 symbols pass it six times over.
  auto window = sample({"--seed", "4", "--max-new-tokens", "100", "--stats"});
  auto shift = sample({"--seed", "4", "--max-new-tokens", "100", "--stats", "--context-shift"});
  auto no_cache = sample({"--seed", "4", "--max-new-tokens", "100", "--stats", "--no-cache"});
  ASSERT_EQ(shift.status, 0) << shift.err;
  EXPECT_NE(window.err.find("symbols/s; mode window"), std::string::npos) << window.err;
  EXPECT_NE(shift.err.find("symbols/s; mode context-shift"), std::string::npos) << shift.err;
  EXPECT_NE(no_cache.err.find("symbols/s; mode no-cache"), std::string::npos) << no_cache.err;
  EXPECT_EQ(window.out, no_cache.out);
  const std::u32string a = decode_utf8(window.out, "stdout"), b = decode_utf8(shift.out, "stdout");
  ASSERT_EQ(b.size(), 100u + 1u);
  // Up to the first shift (the empty prompt's newline and 15 symbols fill the cache) both
  // modes draw from the same logits with the same generator.
  EXPECT_EQ(a.substr(0, 15), b.substr(0, 15));
}

TEST_F(SampleCliTest, ContextShiftIsRefusedOnLearnedPositionsAndWithNoCache) {
  expect_usage_error(run_mini_gpt({"sample", "--checkpoint", learned_checkpoint_, "--context-shift"}, *dir_),
                     "--context-shift needs a model with RoPE positions");
  expect_usage_error(sample({"--context-shift", "--no-cache"}), "--no-cache");
  auto learned = run_mini_gpt({"sample", "--checkpoint", learned_checkpoint_, "--max-new-tokens", "40"}, *dir_);
  EXPECT_EQ(learned.status, 0) << learned.err;  // window mode serves every position type
}

TEST_F(SampleCliTest, BadInputExitsTwoNamingTheFault) {
  expect_usage_error(sample({"--prompt", "小丁Q"}), "position 2");
  expect_usage_error(sample({"--prompt", std::string("小\xff")}), "byte offset 3");
  expect_usage_error(sample({"--temperature", "-0.5"}), "--temperature");
  expect_usage_error(sample({"--top-k", "-1"}), "--top-k");
  expect_usage_error(sample({"--top-p", "0"}), "--top-p");
  expect_usage_error(sample({"--top-p", "1.5"}), "--top-p");
  expect_usage_error(run_mini_gpt({"sample", "--checkpoint", (*dir_ / "missing.safetensors").string()}, *dir_),
                     "missing.safetensors");
  // Truncated: the first half of a good checkpoint.
  const std::string bytes = test::read_text(checkpoint_);
  const auto truncated = *dir_ / "truncated.safetensors";
  std::ofstream(truncated, std::ios::binary) << bytes.substr(0, bytes.size() / 2);
  expect_usage_error(run_mini_gpt({"sample", "--checkpoint", truncated.string()}, *dir_), "truncated.safetensors");
  // Corrupt: one flipped data byte fails the checksum.
  std::string flipped = bytes;
  flipped[flipped.size() - 5] ^= 0x40;
  const auto corrupt = *dir_ / "corrupt.safetensors";
  std::ofstream(corrupt, std::ios::binary) << flipped;
  expect_usage_error(run_mini_gpt({"sample", "--checkpoint", corrupt.string()}, *dir_), "corrupt.safetensors");
  // Config and tensors disagree: the metadata says 2 layers, the tensors hold 1.
  std::string mismatch = bytes;
  const std::string from = "\\\"n_layer\\\":1", to = "\\\"n_layer\\\":2";
  const size_t at = mismatch.find(from);
  ASSERT_NE(at, std::string::npos);
  mismatch.replace(at, from.size(), to);
  const auto edited = *dir_ / "edited.safetensors";
  std::ofstream(edited, std::ios::binary) << mismatch;
  expect_usage_error(run_mini_gpt({"sample", "--checkpoint", edited.string()}, *dir_), "header checksum mismatch");
  // The same edit with the header's checksum renamed away (same length): the disagreement
  // itself is found.
  const size_t sum = mismatch.find("\"header_sha256\"");
  ASSERT_NE(sum, std::string::npos);
  mismatch.replace(sum, 15, "\"header_sha25x\"");
  const auto disagree = *dir_ / "disagree.safetensors";
  std::ofstream(disagree, std::ios::binary) << mismatch;
  expect_usage_error(run_mini_gpt({"sample", "--checkpoint", disagree.string()}, *dir_), "blocks.1");
}

}  // namespace
}  // namespace mg
