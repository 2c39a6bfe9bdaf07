// The command line as a user meets it: exit statuses and one-line errors (docs/cli.md,
// "Rules every command follows").
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>

#include "io/checkpoint.h"
#include "kernels/cpu_variant.h"
#include "kernels/runtime.h"
#include "test_support.h"

namespace mg {
namespace {

using test::run_mini_gpt;

class CliTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = test::fresh_dir(::testing::UnitTest::GetInstance()->current_test_info()->name()); }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / name, std::ios::binary) << text;
    return (dir_ / name).string();
  }
  // A config file like tiny.json with one key replaced.
  std::string tiny_with(const std::string& section, const std::string& key, const nlohmann::json& value) {
    auto json = nlohmann::json::parse(test::read_text(test::source_dir() / "configs" / "tiny.json"));
    json[section][key] = value;
    json["data"]["path"] = (test::source_dir() / "data" / "corpus.txt").string();
    json["data"]["probe_path"] = "";
    return write("config.json", json.dump());
  }
  // One error line; train's stderr starts with its banner, the version and the kernels
  // (docs/cli.md), which may come first.
  static void expect_one_line_error(const test::CommandResult& r, int status, const std::string& needle) {
    EXPECT_EQ(r.status, status) << r.err;
    std::string err = r.err;
    if (err.rfind("mini-gpt ", 0) == 0 && err.find("; kernels: ") < err.find('\n')) err.erase(0, err.find('\n') + 1);
    EXPECT_EQ(err.rfind("mini-gpt: error: ", 0), 0u) << r.err;
    EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << r.err;
    EXPECT_NE(err.find(needle), std::string::npos) << "missing \"" << needle << "\" in: " << r.err;
  }
  std::filesystem::path dir_;
};

TEST_F(CliTest, HelpAndVersionExitZero) {
  auto help = run_mini_gpt({"--help"}, dir_);
  EXPECT_EQ(help.status, 0);
  for (const char* sub : {"train", "sample", "inspect-heads", "eval"}) EXPECT_NE(help.out.find(sub), std::string::npos);
  auto version = run_mini_gpt({"--version"}, dir_);
  EXPECT_EQ(version.status, 0);
  EXPECT_NE(version.out.find("mini-gpt"), std::string::npos);
}

TEST_F(CliTest, UsageErrorsExitTwoWithOneLine) {
  expect_one_line_error(run_mini_gpt({}, dir_), 2, "subcommand");
  expect_one_line_error(run_mini_gpt({"train", "--config", (test::source_dir() / "configs" / "tiny.json").string(), "--bogus"}, dir_),
                        2, "--bogus");
  expect_one_line_error(run_mini_gpt({"train"}, dir_), 2, "--config");
  expect_one_line_error(run_mini_gpt({"train", "--config", (dir_ / "nope.json").string()}, dir_), 2, "nope.json");
}

TEST_F(CliTest, BadConfigValuesExitTwoNamingKeyAndValue) {
  struct Case {
    std::string section, key;
    nlohmann::json value;
    std::string needle;
  };
  const std::vector<Case> cases = {
      {"model", "n_head", 3, "model.n_head"},            // 16 % 3 != 0
      {"model", "block_size", 0, "model.block_size"},
      {"train", "lr", 0, "train.lr"},
      {"train", "lr", "fast", "train.lr"},
      {"data", "val_fraction", 1.5, "data.val_fraction"},
      {"train", "lrr", 1e-3, "train.lrr"},               // unknown key
      {"data", "val_fraction", 1e-6, "data.val_fraction"},  // validation split shorter than block_size + 1
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.section + "." + c.key + "=" + c.value.dump());
    expect_one_line_error(run_mini_gpt({"train", "--config", tiny_with(c.section, c.key, c.value)}, dir_), 2,
                          c.needle);
  }
  expect_one_line_error(run_mini_gpt({"train", "--config", tiny_with("train", "lr", 1e-3), "--set", "train.lr=-1"}, dir_),
                        2, "train.lr");
}

TEST_F(CliTest, AConfigWithoutACorpusSaysDataPathIsNotSet) {
  const std::string config = write("nodata.json", R"({"model": {"n_layer": 1}})");
  expect_one_line_error(run_mini_gpt({"train", "--config", config, "--out", (dir_ / "run").string()}, dir_), 2,
                        "data.path is not set");
}

TEST_F(CliTest, InvalidUtf8CorpusNamesTheByteOffset) {
  const std::string corpus = write("bad.txt", std::string(100, 'a') + "\xff" + std::string(100, 'b'));
  auto r = run_mini_gpt({"train", "--config", tiny_with("train", "lr", 1e-3), "--set", "data.path=" + corpus}, dir_);
  expect_one_line_error(r, 2, "byte offset 100");
}

TEST_F(CliTest, EvalRejectsMissingCheckpointAndUnknownSymbols) {
  expect_one_line_error(run_mini_gpt({"eval", "--checkpoint", (dir_ / "none.safetensors").string(), "--text-file",
                                      (test::source_dir() / "data" / "corpus.txt").string()}, dir_),
                        2, "none.safetensors");
  auto train = run_mini_gpt({"train", "--config", tiny_with("train", "max_steps", 2), "--out", (dir_ / "run").string()}, dir_);
  ASSERT_EQ(train.status, 0) << train.err;
  const std::string text = write("text.txt", "小丁拿着红苹果。小丁拿着红苹果。小丁拿着Z红苹果。");
  expect_one_line_error(run_mini_gpt({"eval", "--checkpoint", (dir_ / "run" / "latest.safetensors").string(),
                                      "--text-file", text}, dir_),
                        2, "position 20");
}

TEST_F(CliTest, AFreshRunRefusesToOverwriteAnotherRunsDirectory) {
  const std::string config = tiny_with("train", "max_steps", 2);
  const std::string out = (dir_ / "run").string();
  ASSERT_EQ(run_mini_gpt({"train", "--config", config, "--out", out}, dir_).status, 0);
  const std::string before = test::read_text(dir_ / "run" / "latest.safetensors");
  expect_one_line_error(run_mini_gpt({"train", "--config", config, "--out", out}, dir_), 2, "--resume");
  EXPECT_EQ(test::read_text(dir_ / "run" / "latest.safetensors"), before);
  auto resumed = run_mini_gpt({"train", "--config", config, "--out", out, "--resume", out + "/latest.safetensors",
                               "--max-steps", "4"}, dir_);
  EXPECT_EQ(resumed.status, 0) << resumed.err;
  // The summary counts the steps this process trained, so its time and tokens/s read right.
  EXPECT_NE(resumed.out.find("trained 2 steps (from step 2 to 4) in "), std::string::npos) << resumed.out;
}

TEST_F(CliTest, DivergingRunStopsWithExitOneAndKeepsTheLastGoodCheckpoint) {
  const std::string config = tiny_with("train", "checkpoint_interval", 1);
  auto r = run_mini_gpt({"train", "--config", config, "--out", (dir_ / "run").string(), "--set", "train.lr=1e30",
                         "--set", "train.warmup_steps=0", "--set", "train.grad_clip=0"}, dir_);
  expect_one_line_error(r, 1, "step");
  if (std::filesystem::exists(dir_ / "run" / "latest.safetensors")) {
    Checkpoint latest = load_checkpoint(dir_ / "run" / "latest.safetensors");
    for (const auto& [name, t] : latest.tensors)
      for (float v : t.span()) ASSERT_TRUE(std::isfinite(v)) << name;
  }
}

// libgomp's waiting policy is read as it loads: with neither OMP_WAIT_POLICY nor
// GOMP_SPINCOUNT set, libgomp's getenv finds kGompSpinCount (cli/openmp_spin.cpp;
// OMP_DISPLAY_ENV=verbose makes libgomp print what it read); a user's setting is left
// alone. One image prints once: the program is not started again.
TEST_F(CliTest, ShortSpinUnlessTheUserChoseAWaitPolicy) {
  const char* policy = std::getenv("OMP_WAIT_POLICY");
  const std::string saved = policy ? policy : "";
  ASSERT_EQ(::unsetenv("OMP_WAIT_POLICY"), 0);
  ASSERT_EQ(::setenv("OMP_DISPLAY_ENV", "verbose", 1), 0);
  const auto ours = run_mini_gpt({"--version"}, dir_);
  ASSERT_EQ(::setenv("GOMP_SPINCOUNT", "77", 1), 0);
  const auto users = run_mini_gpt({"--version"}, dir_);
  ::unsetenv("GOMP_SPINCOUNT");
  ASSERT_EQ(::setenv("OMP_WAIT_POLICY", "passive", 1), 0);
  const auto passive = run_mini_gpt({"--version"}, dir_);
  ::unsetenv("OMP_DISPLAY_ENV");
  if (policy) ::setenv("OMP_WAIT_POLICY", saved.c_str(), 1);
  else ::unsetenv("OMP_WAIT_POLICY");
  ASSERT_EQ(ours.status, 0) << ours.err;
  ASSERT_EQ(users.status, 0) << users.err;
  ASSERT_EQ(passive.status, 0) << passive.err;
  const std::string ours_line = std::string("GOMP_SPINCOUNT = '") + kGompSpinCount + "'";
  const size_t first = ours.err.find(ours_line);
  EXPECT_NE(first, std::string::npos) << ours.err;
  EXPECT_EQ(ours.err.find(ours_line, first + 1), std::string::npos) << "printed twice: " << ours.err;
  EXPECT_EQ(ours.err.find("GOMP_SPINCOUNT = '300000'"), std::string::npos) << ours.err;
  EXPECT_NE(users.err.find("GOMP_SPINCOUNT = '77'"), std::string::npos) << users.err;
  EXPECT_EQ(users.err.find(ours_line), std::string::npos) << users.err;
  EXPECT_EQ(passive.err.find(ours_line), std::string::npos) << passive.err;
}

// OPENBLAS_CORETYPE=Prescott stands for OpenBLAS's fallback on a CPU newer than itself:
// with --backend openblas, train and sample say once which core to set instead; with the
// default backend, which OpenBLAS does not serve, nothing is said.
TEST_F(CliTest, OpenBlasOnKernelsWithoutAvx2WarnsOnceNamingTheCoreToSet) {
  const std::string config = tiny_with("train", "max_steps", 2);
  ASSERT_EQ(::setenv("OPENBLAS_CORETYPE", "Prescott", 1), 0);
  const auto trained = run_mini_gpt({"train", "--config", config, "--out", (dir_ / "run").string(), "--backend", "openblas"}, dir_);
  const auto sampled = run_mini_gpt({"sample", "--checkpoint", (dir_ / "run" / "latest.safetensors").string(),
                                     "--max-new-tokens", "4", "--backend", "openblas"}, dir_);
  const auto onednn = run_mini_gpt({"sample", "--checkpoint", (dir_ / "run" / "latest.safetensors").string(),
                                    "--max-new-tokens", "4", "--backend", "onednn"}, dir_);
  ::unsetenv("OPENBLAS_CORETYPE");
  ASSERT_EQ(trained.status, 0) << trained.err;
  ASSERT_EQ(sampled.status, 0) << sampled.err;
  ASSERT_EQ(onednn.status, 0) << onednn.err;
  const CpuVariant best = best_cpu_variant();
  const std::string expected = best == CpuVariant::avx512 ? "OPENBLAS_CORETYPE=SkylakeX"
                               : best == CpuVariant::avx2 ? "OPENBLAS_CORETYPE=Haswell" : "";
  for (const auto* r : {&trained, &sampled}) {
    const size_t at = r->err.find("mini-gpt: warning: OpenBLAS runs its Prescott kernels");
    if (expected.empty()) {
      EXPECT_EQ(at, std::string::npos) << r->err;
      continue;
    }
    ASSERT_NE(at, std::string::npos) << r->err;
    EXPECT_NE(r->err.find(expected, at), std::string::npos) << r->err;
    EXPECT_EQ(r->err.find("mini-gpt: warning", at + 1), std::string::npos) << "warned twice: " << r->err;
  }
  EXPECT_EQ(onednn.err.find("warning"), std::string::npos) << onednn.err;
}

}  // namespace
}  // namespace mg
