// Every evaluation's model kept (issue 57, io/evaluation_models.h): evals/step_NNNNNNN.safetensors
// at each evaluation holds the run's weights at that step, bit for bit and nothing else;
// a stopped and resumed run keeps the earlier ones, and a killed run's leftovers (a
// temporary, a model past the step it resumes from) go; the default run's models fit in
// 100 MB.
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <atomic>
#include <cstdio>
#include <fstream>

#include "config_support.h"
#include "data/corpus.h"
#include "error_support.h"
#include "inference/model_store.h"
#include "io/checkpoint.h"
#include "io/evaluation_models.h"
#include "test_support.h"
#include "train/checkpoints.h"
#include "train/state.h"
#include "train/train.h"

namespace mg {
namespace {

namespace fs = std::filesystem;
using test::fresh_dir;
using test::tiny_config;

std::vector<int64_t> kept_steps(const fs::path& dir) {
  std::vector<int64_t> steps;
  for (const EvaluationModel& m : list_evaluation_models(dir)) steps.push_back(m.step);
  return steps;
}

// Every parameter of A equals B's, bit for bit.
void expect_same_weights(const Checkpoint& a, const Checkpoint& b, const std::string& what) {
  for (const auto& [name, tensor] : a.tensors) {
    if (name.rfind("optim.", 0) == 0) continue;
    ASSERT_TRUE(b.tensors.count(name)) << what << ": " << name;
    const auto x = tensor.span(), y = b.tensors.at(name).span();
    ASSERT_EQ(x.size(), y.size()) << what << ": " << name;
    EXPECT_EQ(0, std::memcmp(x.data(), y.data(), x.size() * sizeof(float))) << what << ": " << name;
  }
}

TrainRequest tiny_request(const fs::path& dir, int64_t max_steps) {
  TrainRequest r;
  r.config = tiny_config(dir);
  r.config.train.threads = 1;
  r.config.train.max_steps = max_steps;
  r.config.train.eval_interval = 20;
  r.config.train.checkpoint_interval = 20;
  return r;
}

TEST(EvaluationModelsTest, EachEvaluationKeepsTheWeightsAloneAndTheLastEqualsLatest) {
  const fs::path dir = fresh_dir("evals-kept");
  train(tiny_request(dir, 50));  // evaluations at 20, 40 and max_steps 50
  EXPECT_EQ(kept_steps(dir), (std::vector<int64_t>{20, 40, 50}));
  const Checkpoint last = load_checkpoint(evaluation_model_path(dir, 50));
  EXPECT_EQ(last.step, 50);
  EXPECT_FALSE(last.has_optimizer_state());  // the weights alone
  const Checkpoint latest = load_checkpoint(dir / "latest.safetensors");
  expect_same_weights(latest, last, "evals/step_0000050 against latest.safetensors");
  EXPECT_EQ(last.tensors.size() * 3, latest.tensors.size());  // latest has the two moments too
  // Nothing else in the folder: no temporary left behind.
  int64_t files = 0;
  for (const auto& entry : fs::directory_iterator(dir / kEvaluationsFolder)) files += entry.is_regular_file();
  EXPECT_EQ(files, 3);
  fs::remove_all(dir);
}

TEST(EvaluationModelsTest, AResumedRunKeepsTheEarlierOnesAndAKilledRunsLeftoversGo) {
  const fs::path straight_dir = fresh_dir("evals-straight"), resumed_dir = fresh_dir("evals-resumed");
  train(tiny_request(straight_dir, 60));

  // Stopped at step 27: latest.safetensors at 27, evaluations kept at 20.
  std::atomic<bool> stop{false};
  TrainRequest first = tiny_request(resumed_dir, 60);
  first.stop_requested = &stop;
  first.on_progress = [&](const TrainProgress& p) {
    if (p.step == 27) stop = true;
  };
  ASSERT_TRUE(train(first).interrupted);
  ASSERT_EQ(kept_steps(resumed_dir), (std::vector<int64_t>{20}));
  struct stat before {};
  ASSERT_EQ(::stat(evaluation_model_path(resumed_dir, 20).c_str(), &before), 0);

  // What a kill leaves: a model past the step resumed from (a run that went on after its
  // last checkpoint), and a temporary cut short.
  fs::copy_file(evaluation_model_path(resumed_dir, 20), evaluation_model_path(resumed_dir, 50));
  const fs::path temporary = resumed_dir / kEvaluationsFolder / ".step_0000040.safetensors.tmp.99999";
  std::ofstream(temporary) << "half";

  TrainRequest second = tiny_request(resumed_dir, 60);
  second.resume = resumed_dir / "latest.safetensors";
  train(second);
  EXPECT_FALSE(fs::exists(temporary));
  EXPECT_EQ(kept_steps(resumed_dir), (std::vector<int64_t>{20, 40, 60}));  // 50 gone: no evaluation there
  struct stat after {};
  ASSERT_EQ(::stat(evaluation_model_path(resumed_dir, 20).c_str(), &after), 0);
  EXPECT_EQ(before.st_ino, after.st_ino);  // the earlier one kept, not written again
  EXPECT_EQ(before.st_mtim.tv_nsec, after.st_mtim.tv_nsec);
  for (int64_t step : {20, 40, 60})
    expect_same_weights(load_checkpoint(evaluation_model_path(straight_dir, step)),
                        load_checkpoint(evaluation_model_path(resumed_dir, step)),
                        "step " + std::to_string(step) + ", straight against stopped and resumed");
  fs::remove_all(straight_dir);
  fs::remove_all(resumed_dir);
}

TEST(EvaluationModelsTest, AFreshRunRefusesAFolderHoldingAnotherRunsEvaluations) {
  const fs::path dir = fresh_dir("evals-refused");
  fs::create_directories(dir / kEvaluationsFolder);
  const std::string message = test::input_error_of([&] { train(tiny_request(dir, 20)); });
  EXPECT_NE(message.find("evals"), std::string::npos) << message;
  EXPECT_TRUE(fs::is_empty(dir / kEvaluationsFolder));
  fs::remove_all(dir);
}

TEST(EvaluationModelsTest, NamesAreStepsPaddedToSevenDigitsAndNothingElseIsOne) {
  EXPECT_EQ(evaluation_model_path("r", 250), fs::path("r/evals/step_0000250.safetensors"));
  EXPECT_EQ(evaluation_model_path("r", 123456789), fs::path("r/evals/step_123456789.safetensors"));
  EXPECT_EQ(evaluation_model_step("step_0000250.safetensors"), 250);
  EXPECT_EQ(evaluation_model_step("step_123456789.safetensors"), 123456789);
  for (const char* not_one : {"step_250.safetensors", ".step_0000250.safetensors.tmp.12", "step_00002x0.safetensors",
                              "step_0000250.safetensors.bak", "latest.safetensors"})
    EXPECT_EQ(evaluation_model_step(not_one), -1) << not_one;
}

// The default run (configs/default.json, 19,531 steps, an evaluation every 250 and one at the
// end) keeps 79 models of 836,608 bytes of weights and a header each: under 100 MB.
TEST(EvaluationModelsTest, TheDefaultRunKeepsUnder100MB) {
  Config config = load_config(test::source_dir() / "configs" / "default.json");
  const Corpus corpus = load_corpus(config.data.path, config.data.val_fraction, config.model.block_size);
  config.model.vocab_size = corpus.vocab.size();
  const fs::path dir = fresh_dir("evals-size");
  config.train.out_dir = (fs::path("runs") / "default").string();  // as the default run names itself
  TrainingState state(config, corpus.train, RowStart::anywhere());
  Rng rng(config.train.seed);
  state.model.initialize(rng);
  state.step = 19531;
  CheckpointPolicy(config, corpus.vocab, dir, true, 1).keep_evaluation(state);  // train's own writer
  const auto bytes = static_cast<int64_t>(fs::file_size(evaluation_model_path(dir, 19531)));
  uint64_t header = 0;
  std::ifstream(evaluation_model_path(dir, 19531), std::ios::binary).read(reinterpret_cast<char*>(&header), 8);
  EXPECT_EQ(bytes, 8 + static_cast<int64_t>(header) + 836608);  // docs/checkpoint.md: 209,152 floats
  const int64_t max_steps = config.train.max_steps, interval = config.train.eval_interval;
  const int64_t evaluations = max_steps / interval + (max_steps % interval != 0);
  EXPECT_EQ(evaluations, 79);
  EXPECT_LE(evaluations * bytes, 100'000'000);
  std::printf("default run: %lld evaluations x %lld bytes = %lld bytes kept in evals/\n",
              static_cast<long long>(evaluations), static_cast<long long>(bytes),
              static_cast<long long>(evaluations * bytes));
  fs::remove_all(dir);
}

}  // namespace
}  // namespace mg
