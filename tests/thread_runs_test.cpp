// A run's bits do not depend on the thread count (docs/performance.md, "Reproducible on
// any thread count"): `mini-gpt train` on configs/tiny.json (50 steps) and
// configs/default.json (20 steps) at 1, 2 and 3 threads writes the same checkpoint tensors
// (parameters and AdamW moments) and the same losses and gradient norms, on oneDNN and on
// OpenBLAS, with RoPE and with learned positions; a run stopped on 1 thread continues on 2
// bit for bit; `eval` and `inspect-heads --format json` print the same bytes on 1 and 2
// threads. (The test machine may have fewer cores than 3 threads: that oversubscribes, which
// changes the timing, not the arithmetic.)
#include <gtest/gtest.h>

#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include "environment_support.h"
#include "io/checkpoint.h"
#include "test_support.h"

namespace mg {
namespace {

using test::run_mini_gpt;

struct TrainedRun {
  std::filesystem::path dir;
  std::vector<nlohmann::json> metrics;
};

std::vector<nlohmann::json> read_metrics(const std::filesystem::path& dir) {
  std::vector<nlohmann::json> rows;
  std::istringstream lines(test::read_text(dir / "metrics.jsonl"));
  for (std::string line; std::getline(lines, line);) rows.push_back(nlohmann::json::parse(line));
  return rows;
}

// Expects every tensor of B's checkpoint to hold A's bytes, naming the first few that do not.
void expect_same_tensors(const std::filesystem::path& a, const std::filesystem::path& b, const std::string& what) {
  const Checkpoint x = load_checkpoint(a), y = load_checkpoint(b);
  ASSERT_EQ(x.tensors.size(), y.tensors.size()) << what;
  std::vector<std::string> differ;
  for (const auto& [name, t] : x.tensors) {
    const Tensor& u = y.tensors.at(name);
    if (t.numel() != u.numel() || std::memcmp(t.data(), u.data(), sizeof(float) * t.numel()) != 0)
      differ.push_back(name);
  }
  EXPECT_TRUE(differ.empty()) << what << ": " << differ.size() << " of " << x.tensors.size()
                              << " tensors differ, the first " << differ.front();
}

// The losses, gradient norms and validation losses (where both runs evaluated) of two runs'
// metrics, step by step (metrics.jsonl holds them as JSON doubles, printed to round-trip),
// from the first step of B.
void expect_same_figures(const std::vector<nlohmann::json>& a, const std::vector<nlohmann::json>& b,
                         const std::string& what) {
  ASSERT_LE(b.size(), a.size()) << what;
  const size_t offset = a.size() - b.size();
  for (size_t i = 0; i < b.size(); ++i) {
    const nlohmann::json &x = a[offset + i], &y = b[i];
    ASSERT_EQ(x["step"], y["step"]) << what;
    const bool same = x["loss"].get<double>() == y["loss"].get<double>() &&
                      x["grad_norm"].get<double>() == y["grad_norm"].get<double>() &&
                      (!x.contains("val_loss") || !y.contains("val_loss") || x["val_loss"] == y["val_loss"]);
    EXPECT_TRUE(same) << what << ": step " << y["step"] << " differs (loss " << x["loss"] << " and " << y["loss"]
                      << ", gradient norm " << x["grad_norm"] << " and " << y["grad_norm"] << ", validation loss "
                      << x.value("val_loss", -1.0) << " and " << y.value("val_loss", -1.0) << ")";
    if (!same) return;  // the first step that differs is enough
  }
}

class ThreadRunsTest : public ::testing::TestWithParam<const char*> {
 protected:
  void SetUp() override {
    // The mini-gpt it starts inherits the environment: MINI_GPT_KERNELS and OPENBLAS_CORETYPE
    // as ctest set them for this entry (environment_support.h).
    if (const std::string why = test::use_test_environment(); !why.empty()) GTEST_SKIP() << why;
    dir_ = test::fresh_dir(test_name());
  }
  void TearDown() override {
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }

  static std::string test_name() {
    std::string name = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    for (char& c : name)
      if (c == '/') c = '-';
    return name;
  }
  static std::string config(const char* name) { return (test::source_dir() / "configs" / name).string(); }

  // `mini-gpt train` on CONFIG for STEPS steps on THREADS threads with the backend under
  // test, into a run directory of its own; EXTRA: more arguments. No probe set: the head
  // explorer that a run with one writes at its end scores every head's ablation over it,
  // most of a short run's time (the probe's scores on 1 and 2 threads are eval's and
  // inspect-heads', below); the validation loss of the last step is compared.
  TrainedRun train(const char* config_name, int steps, int threads, const std::string& label,
                   const std::vector<std::string>& extra = {}) {
    TrainedRun run{dir_ / (label + "-" + std::to_string(threads) + "-threads"), {}};
    std::vector<std::string> args{"train",     "--config",  config(config_name), "--out", run.dir.string(),
                                  "--max-steps", std::to_string(steps), "--threads", std::to_string(threads),
                                  "--backend", GetParam(), "--set", "data.probe_path="};
    args.insert(args.end(), extra.begin(), extra.end());
    const test::CommandResult r = run_mini_gpt(args, dir_);
    EXPECT_EQ(r.status, 0) << r.err;
    run.metrics = read_metrics(run.dir);
    return run;
  }

  // STEPS steps of CONFIG on 1, 2 and 3 threads: the same tensors and figures as on 1.
  void expect_same_run_on_one_two_three_threads(const char* config_name, int steps, const std::string& position) {
    const std::vector<std::string> extra{"--set", "model.position=" + position};
    const TrainedRun one = train(config_name, steps, 1, position, extra);
    ASSERT_EQ(one.metrics.size(), static_cast<size_t>(steps));
    for (int threads : {2, 3}) {
      const TrainedRun other = train(config_name, steps, threads, position, extra);
      const std::string what = std::string(config_name) + " " + position + ", " + GetParam() + ", " +
                               std::to_string(threads) + " threads against 1 (" + test::test_environment() + ")";
      expect_same_figures(one.metrics, other.metrics, what);
      expect_same_tensors(one.dir / "latest.safetensors", other.dir / "latest.safetensors", what);
    }
  }

  std::filesystem::path dir_;
};

TEST_P(ThreadRunsTest, TinyConfigFiftyStepsWithRope) { expect_same_run_on_one_two_three_threads("tiny.json", 50, "rope"); }

TEST_P(ThreadRunsTest, TinyConfigFiftyStepsWithLearnedPositions) {
  expect_same_run_on_one_two_three_threads("tiny.json", 50, "learned");
}

TEST_P(ThreadRunsTest, DefaultConfigTwentyStepsWithRope) {
  expect_same_run_on_one_two_three_threads("default.json", 20, "rope");
}

TEST_P(ThreadRunsTest, DefaultConfigTwentyStepsWithLearnedPositions) {
  expect_same_run_on_one_two_three_threads("default.json", 20, "learned");
}

// Stopped after 10 steps on 1 thread and resumed to 20 on 2: the checkpoint and every step's
// figures of a run that took its 20 steps on 2 threads. The 20 steps are all in
// configs/default.json's warm-up (100 steps), whose learning rate does not depend on
// max_steps, so the first part's --max-steps 10 changes no step's rate.
TEST_P(ThreadRunsTest, RunStoppedOnOneThreadContinuesOnTwoBitForBit) {
  const TrainedRun straight = train("default.json", 20, 2, "straight");
  const TrainedRun first = train("default.json", 10, 1, "resumed");
  ASSERT_TRUE(std::filesystem::exists(first.dir / "latest.safetensors"));
  const test::CommandResult r =
      run_mini_gpt({"train", "--config", config("default.json"), "--resume", (first.dir / "latest.safetensors").string(),
                    "--max-steps", "20", "--threads", "2", "--backend", GetParam(), "--set", "data.probe_path="},
                   dir_);
  ASSERT_EQ(r.status, 0) << r.err;
  const std::vector<nlohmann::json> resumed = read_metrics(first.dir);
  ASSERT_EQ(resumed.size(), 20u);
  const std::string what = std::string("default.json, ") + GetParam() + ", 10 steps on 1 thread then 10 on 2";
  expect_same_figures(straight.metrics, resumed, what);
  expect_same_tensors(straight.dir / "latest.safetensors", first.dir / "latest.safetensors", what);
}

// eval (text windows and probe) and inspect-heads' JSON (one text; the roles over the probe
// set) of a checkpoint of the default model print the same bytes on 1 and 2 threads.
TEST_P(ThreadRunsTest, EvalAndInspectHeadsPrintTheSameBytesOnOneAndTwoThreads) {
  const TrainedRun run = train("default.json", 20, 1, "model");
  const std::string checkpoint = (run.dir / "latest.safetensors").string();
  // The corpus's first 2,000 lines: whole lines are whole UTF-8, and many 64-symbol windows.
  std::istringstream corpus(test::read_text(test::source_dir() / "data" / "corpus.txt"));
  std::ofstream text(dir_ / "eval.txt", std::ios::binary);
  std::string line;
  for (int i = 0; i < 2000 && std::getline(corpus, line); ++i) text << line << '\n';
  text.close();
  const std::string probe = (test::source_dir() / "data" / "probe.jsonl").string();
  const std::vector<std::vector<std::string>> commands{
      {"eval", "--checkpoint", checkpoint, "--text-file", (dir_ / "eval.txt").string(), "--probe", probe, "--json"},
      {"inspect-heads", "--checkpoint", checkpoint, "--text", "灰帽子是小孙的。白风筝是小赵的。橙帽子是小罗的。橙帽子是谁的？", "--format", "json"},
      {"inspect-heads", "--checkpoint", checkpoint, "--roles", "--probe", probe, "--format", "json"},
  };
  for (const std::vector<std::string>& command : commands) {
    std::vector<std::string> outputs;
    for (const char* threads : {"1", "2"}) {
      std::vector<std::string> args = command;
      args.insert(args.end(), {"--threads", threads, "--backend", GetParam()});
      const test::CommandResult r = run_mini_gpt(args, dir_);
      ASSERT_EQ(r.status, 0) << command[0] << ": " << r.err;
      ASSERT_FALSE(r.out.empty()) << command[0];
      outputs.push_back(r.out);
    }
    EXPECT_EQ(outputs[0], outputs[1]) << command[0] << " " << command[3] << " on 1 and 2 threads";
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, ThreadRunsTest, ::testing::Values("onednn", "openblas"),
                         [](const auto& info) { return std::string(info.param); });

}  // namespace
}  // namespace mg
