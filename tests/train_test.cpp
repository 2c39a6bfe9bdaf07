// The training loop end to end on configs/tiny.json: the loss falls, a stopped run
// resumes bit for bit, Ctrl-C leaves a loadable checkpoint, and eval's figure matches
// a hand computation.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <thread>

#include "config_support.h"
#include "data/corpus.h"
#include "error_support.h"
#include "inference/evaluate.h"
#include "inference/model_store.h"
#include "io/checkpoint.h"
#include "model_support.h"
#include "test_support.h"
#include "train/train.h"

namespace mg {
namespace {

using test::fresh_dir;
using test::tiny_config;

std::vector<nlohmann::json> read_metrics(const std::filesystem::path& dir) {
  std::vector<nlohmann::json> rows;
  std::istringstream lines(test::read_text(dir / "metrics.jsonl"));
  for (std::string line; std::getline(lines, line);) rows.push_back(nlohmann::json::parse(line));
  return rows;
}

TEST(TrainTest, TinyConfigLossFallsBelowBoundWithinItsSteps) {
  auto dir = fresh_dir("falls");
  TrainRequest request;
  request.config = tiny_config(dir);
  request.config.train.threads = 1;
  TrainResult result = train(request);
  ASSERT_EQ(result.step, 200);
  ASSERT_TRUE(result.final_val_loss.has_value());
  // ln(79) = 4.37 at the start; the tiny model reaches about 1.0 within 200 steps.
  EXPECT_LT(*result.final_val_loss, 1.3);
  auto rows = read_metrics(dir);
  ASSERT_EQ(rows.size(), 200u);
  EXPECT_NEAR(rows.front()["loss"].get<double>(), std::log(79.0), 0.1);
  for (const char* key : {"step", "lr", "loss", "grad_norm", "tokens_per_s", "elapsed_s"})
    EXPECT_TRUE(rows[10].contains(key)) << key;
  EXPECT_TRUE(rows[49].contains("val_loss"));
  EXPECT_TRUE(rows[49].contains("probe_accuracy"));
  for (const char* file : {"config.json", "latest.safetensors", "best.safetensors"})
    EXPECT_TRUE(std::filesystem::exists(dir / file)) << file;
  std::filesystem::remove_all(dir);
}

TEST(TrainTest, StoppedAndResumedRunPrintsTheSameLossesBitForBit) {
  const int64_t total = 60, stop_at = 27;  // stop between checkpoints and evaluations
  auto straight_dir = fresh_dir("straight"), resumed_dir = fresh_dir("resumed");

  TrainRequest straight;
  straight.config = tiny_config(straight_dir);
  straight.config.train.max_steps = total;
  straight.config.train.eval_interval = 20;
  straight.config.train.checkpoint_interval = 20;
  straight.config.model.dropout = 0.1;  // the dropout generator must resume too
  train(straight);

  std::atomic<bool> stop{false};
  TrainRequest first = straight;
  first.config.train.out_dir = resumed_dir.string();
  first.stop_requested = &stop;
  first.on_progress = [&](const TrainProgress& p) {
    if (p.step == stop_at) stop = true;
  };
  TrainResult stopped = train(first);
  ASSERT_TRUE(stopped.interrupted);
  ASSERT_EQ(stopped.step, stop_at);

  TrainRequest second = straight;
  second.config.train.out_dir = resumed_dir.string();
  second.resume = resumed_dir / "latest.safetensors";
  TrainResult finished = train(second);
  ASSERT_EQ(finished.step, total);

  auto a = read_metrics(straight_dir), b = read_metrics(resumed_dir);
  ASSERT_EQ(a.size(), static_cast<size_t>(total));
  ASSERT_EQ(b.size(), static_cast<size_t>(total));
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i]["loss"].get<double>(), b[i]["loss"].get<double>()) << "step " << i + 1;
    EXPECT_EQ(a[i]["grad_norm"].get<double>(), b[i]["grad_norm"].get<double>()) << "step " << i + 1;
    EXPECT_EQ(a[i].contains("val_loss"), b[i].contains("val_loss"));
    if (a[i].contains("val_loss")) {
      EXPECT_EQ(a[i]["val_loss"].get<double>(), b[i]["val_loss"].get<double>());
    }
  }
  Checkpoint x = load_checkpoint(straight_dir / "latest.safetensors");
  Checkpoint y = load_checkpoint(resumed_dir / "latest.safetensors");
  ASSERT_EQ(x.tensors.size(), y.tensors.size());
  for (const auto& [name, t] : x.tensors) {
    const Tensor& u = y.tensors.at(name);
    ASSERT_EQ(0, std::memcmp(t.data(), u.data(), sizeof(float) * t.numel())) << name;
  }
  std::filesystem::remove_all(straight_dir);
  std::filesystem::remove_all(resumed_dir);
}

// train.freeze_block0_qk_to_step: before it, block 0's query and key projections keep the
// initialisation's values (weight decay 0 here, which would otherwise shrink them) while
// every other weight trains; from it on they train too.
TEST(TrainTest, Block0QueryAndKeyKeepTheirInitialValuesUntilTheFreezeEnds) {
  auto dir = fresh_dir("frozen");
  TrainRequest request;
  request.config = tiny_config(dir);
  request.config.train.threads = 1;
  request.config.model.n_layer = 2;  // tiny.json has one block
  request.config.train.max_steps = 20;
  request.config.train.weight_decay = 0.0;
  request.config.train.freeze_block0_qk_to_step = 20;
  train(request);
  const LoadedModel frozen = load_model(dir / "latest.safetensors");
  Gpt fresh(frozen.config.model);
  Rng init_rng(request.config.train.seed);  // as train/train.cpp initialises a fresh run
  fresh.initialize(init_rng);
  auto same = [](const Var& a, const Var& b) {
    return a.value().numel() == b.value().numel() &&
           std::memcmp(a.value().data(), b.value().data(), sizeof(float) * a.value().numel()) == 0;
  };
  const BlockWeights& init = fresh.weights().blocks[0];
  const BlockWeights& after20 = frozen.model.weights().blocks[0];
  EXPECT_TRUE(same(after20.q_proj, init.q_proj));
  EXPECT_TRUE(same(after20.k_proj, init.k_proj));
  EXPECT_FALSE(same(after20.v_proj, init.v_proj)) << "block 0's values train";
  EXPECT_FALSE(same(frozen.model.weights().blocks[1].q_proj, fresh.weights().blocks[1].q_proj))
      << "block 1's queries train";

  TrainRequest more = request;  // resumed past the freeze: block 0's scores train from step 20
  more.config.train.max_steps = 30;
  more.resume = dir / "latest.safetensors";
  train(more);
  const LoadedModel thawed = load_model(dir / "latest.safetensors");
  EXPECT_FALSE(same(thawed.model.weights().blocks[0].q_proj, init.q_proj));
  EXPECT_FALSE(same(thawed.model.weights().blocks[0].k_proj, init.k_proj));

  Config config = request.config;
  EXPECT_EQ(test::input_error_of([&] { apply_override(config, "train.freeze_block0_qk_to_step=-1"); }),
            "--set train.freeze_block0_qk_to_step=-1: train.freeze_block0_qk_to_step must be >= 0, found -1");
  std::filesystem::remove_all(dir);
}

TEST(TrainTest, SigintFinishesTheStepWritesLatestAndExits130) {
  auto dir = fresh_dir("sigint");
  const std::string config = (test::source_dir() / "configs" / "tiny.json").string();
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    freopen("/dev/null", "w", stderr);
    execl(MINI_GPT_BINARY, MINI_GPT_BINARY, "train", "--config", config.c_str(), "--out", dir.c_str(),
          "--max-steps", "1000000", "--threads", "1", nullptr);
    _exit(127);
  }
  // Wait until it is training (metrics appear), then interrupt it.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < deadline &&
         test::read_text(dir / "metrics.jsonl").find("\"step\":3,") == std::string::npos)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  kill(pid, SIGINT);
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 130);
  Checkpoint latest = load_checkpoint(dir / "latest.safetensors");
  EXPECT_GE(latest.step, 3);
  EXPECT_TRUE(latest.has_optimizer_state());
  EXPECT_EQ(read_metrics(dir).size(), static_cast<size_t>(latest.step));
  std::filesystem::remove_all(dir);
}

TEST(EvalTest, ModelWithZeroHeadPredictsUniformlySoLossIsLnV) {
  // With head.weight = 0 every logit is 0, so each prediction costs exactly ln(V).
  Gpt model = test::small_model(/*n_layer=*/1, /*n_embd=*/8, /*block_size=*/5, /*vocab_size=*/7, /*seed=*/5);
  model.parameters().get("head.weight").value().fill(0.0f);
  std::vector<int32_t> ids = {0, 1, 2, 3, 4, 5, 6, 0, 1, 2, 3, 4, 5};  // n = 13: windows k = 0, 1 (kT+T+1 <= 13)
  EvalResult r = evaluate_windows(model, ids);
  EXPECT_EQ(r.predictions, 10);
  EXPECT_NEAR(r.loss, std::log(7.0), 1e-6);
}

TEST(EvalTest, WindowsMatchAPerWindowLoopOverTheSpecRule) {
  Gpt model = test::small_model(/*n_layer=*/2, /*n_embd=*/16, /*block_size=*/8, /*vocab_size=*/11, /*seed=*/9);
  std::vector<int32_t> ids;
  for (int i = 0; i < 8 * 40 + 5; ++i) ids.push_back((i * 7 + i / 3) % 11);  // 40 windows, 4 spare symbols
  double total = 0;
  int64_t count = 0;
  for (size_t k = 0; (k + 1) * 8 + 1 <= ids.size(); ++k) {
    NoGradGuard no_grad;
    std::vector<int32_t> in(ids.begin() + k * 8, ids.begin() + k * 8 + 8), tg(ids.begin() + k * 8 + 1, ids.begin() + k * 8 + 9);
    total += model.loss(in, tg, 1, 8).value()[0] * 8.0;
    count += 8;
  }
  EvalResult r = evaluate_windows(model, ids);
  EXPECT_EQ(r.predictions, count);
  EXPECT_EQ(r.predictions, 320);
  EXPECT_NEAR(r.loss, total / count, 1e-6);
}

}  // namespace
}  // namespace mg
