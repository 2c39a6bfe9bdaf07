// Data-parallel training under a real mpirun (two or three ranks on this machine,
// loopback TCP only, one thread each) on configs/tiny.json: the loss curve matches the
// single process's, an MPI run resumes on another number of ranks, and a rank that
// dies or stops ends the job with a non-zero status while latest.safetensors stays whole.
// Built only with MINI_GPT_MPI.
//
// Tolerance: the ranks compute the same arithmetic as the single process except the
// order of the float32 sums over the batch (each rank sums its rows, the allreduce adds
// the ranks' weighted sums), a relative difference of a few float32 ulps (1e-7) per
// gradient element and step. Training amplifies it slowly (measured: at most 1.5e-6
// relative on any of tiny.json's 200 step losses with 2 or 3 ranks, 1.1e-5 on the
// gradient norms, which sum squares of small differences); the tests allow 1e-4 on
// losses and 1e-3 on gradient norms, far below a real error (a wrong weighting of the
// shares scales the norm by the number of ranks; a batch drawn twice or a missed
// gradient moves the loss by 1e-3 or more within a few steps).
#include <cstdlib>
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <fcntl.h>
#include <fstream>
#include <thread>

#include "io/checkpoint.h"
#include "config_support.h"
#include "test_support.h"

namespace mg {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using test::fresh_dir;

constexpr double kLossTolerance = 1e-4;      // relative; see the file's opening comment
constexpr double kGradNormTolerance = 1e-3;  // relative
constexpr int kJobDeadlineS = 120;       // a job still running after this is a hang: killed, test fails

std::string tiny_config_path() { return (test::source_dir() / "configs" / "tiny.json").string(); }

// mpirun for NP ranks on this machine: oversubscribed (2 cores), unbound, loopback TCP.
std::vector<std::string> mpirun(int np) {
  std::vector<std::string> args = {MINI_GPT_MPIEXEC, "-np", std::to_string(np), "--oversubscribe",
                                   "--bind-to", "none", "--mca", "btl", "self,tcp",
                                   "--mca", "btl_tcp_if_include", "lo", "--mca", "oob_tcp_if_include", "lo"};
  if (geteuid() == 0) args.push_back("--allow-run-as-root");
#if defined(__SANITIZE_ADDRESS__)
  // In the sanitizer build the ranks keep ASan and UBSan but not LeakSanitizer: OpenMPI's
  // own allocations come from components it has dlclosed by exit and from libraries built
  // without frame pointers, so LSan can neither attribute nor suppress them. mini-gpt's
  // code on this path is leak-checked by the single-process tests.
  const char* asan = std::getenv("ASAN_OPTIONS");
  args.insert(args.end(), {"-x", std::string("ASAN_OPTIONS=") + (asan ? asan : "") + ":detect_leaks=0"});
#endif
  return args;
}

std::vector<std::string> train_args(const fs::path& out, const std::vector<std::string>& extra) {
  std::vector<std::string> args = {MINI_GPT_BINARY, "train", "--config", tiny_config_path(),
                                   "--out", out.string(), "--threads", "1"};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

std::vector<std::string> concat(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// Starts ARGS in its own process group, stdout and stderr into files under SCRATCH.
pid_t spawn(const std::vector<std::string>& args, const fs::path& scratch) {
  const std::string out = (scratch / "stdout.txt").string(), err = (scratch / "stderr.txt").string();
  pid_t pid = fork();
  if (pid == 0) {
    setpgid(0, 0);
    setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 1);
    setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 1);
    int fd_out = open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int fd_err = open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(fd_out, STDOUT_FILENO);
    dup2(fd_err, STDERR_FILENO);
    std::vector<char*> argv;
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  return pid;
}

// Waits for PID until the deadline; then kills its process group and reports -1.
int wait_exit_status(pid_t pid, int deadline_s = kJobDeadlineS) {
  const auto deadline = Clock::now() + std::chrono::seconds(deadline_s);
  int status = 0;
  while (waitpid(pid, &status, WNOHANG) == 0) {
    if (Clock::now() > deadline) {
      kill(-pid, SIGKILL);
      waitpid(pid, &status, 0);
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

test::CommandResult run(const std::vector<std::string>& args, const fs::path& scratch) {
  test::CommandResult r;
  r.status = wait_exit_status(spawn(args, scratch));
  r.out = test::read_text(scratch / "stdout.txt");
  r.err = test::read_text(scratch / "stderr.txt");
  return r;
}

std::vector<nlohmann::json> read_metrics(const fs::path& dir) {
  std::vector<nlohmann::json> rows;
  std::istringstream lines(test::read_text(dir / "metrics.jsonl"));
  for (std::string line; std::getline(lines, line);) rows.push_back(nlohmann::json::parse(line));
  return rows;
}

size_t count_of(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// Rows FIRST.. of `b` against the same steps of `a`: losses within the tolerance,
// evaluations on the same steps.
void expect_same_curve(const std::vector<nlohmann::json>& a, const std::vector<nlohmann::json>& b, size_t first = 0) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = first; i < a.size(); ++i) {
    ASSERT_EQ(a[i]["step"], b[i]["step"]);
    const double x = a[i]["loss"].get<double>(), y = b[i]["loss"].get<double>();
    EXPECT_NEAR(y, x, kLossTolerance * x) << "step " << i + 1;
    const double gx = a[i]["grad_norm"].get<double>(), gy = b[i]["grad_norm"].get<double>();
    EXPECT_NEAR(gy, gx, kGradNormTolerance * gx) << "step " << i + 1;
    ASSERT_EQ(a[i].contains("val_loss"), b[i].contains("val_loss")) << "step " << i + 1;
    if (a[i].contains("val_loss")) {
      const double u = a[i]["val_loss"].get<double>(), v = b[i]["val_loss"].get<double>();
      EXPECT_NEAR(v, u, kLossTolerance * u) << "step " << i + 1;
      // A probe whose two best logits are within float32 noise may flip: one in 500.
      EXPECT_NEAR(b[i]["probe_accuracy"].get<double>(), a[i]["probe_accuracy"].get<double>(), 0.0021);
    }
  }
}

// The pid of the process with parent PARENT whose environment says OMPI_COMM_WORLD_RANK=RANK.
pid_t find_rank(pid_t parent, int rank) {
  const std::string wanted = "OMPI_COMM_WORLD_RANK=" + std::to_string(rank);
  for (const auto& entry : fs::directory_iterator("/proc")) {
    const std::string name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::string stat = test::read_text(entry.path() / "stat");  // "pid (comm) state ppid ..."
    const size_t close = stat.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream fields(stat.substr(close + 2));
    char state;
    pid_t ppid = 0;
    fields >> state >> ppid;
    if (ppid != parent) continue;
    std::istringstream variables(test::read_text(entry.path() / "environ"));  // NUL-separated
    for (std::string variable; std::getline(variables, variable, '\0');)
      if (variable == wanted) return std::stoi(name);
  }
  return -1;
}

// Waits until metrics.jsonl of DIR has reached STEP (false after 60 s).
bool wait_for_step(const fs::path& dir, int step) {
  const auto deadline = Clock::now() + std::chrono::seconds(60);
  const std::string marker = "\"step\":" + std::to_string(step) + ",";
  while (Clock::now() < deadline) {
    if (test::read_text(dir / "metrics.jsonl").find(marker) != std::string::npos) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

TEST(MpiTrainTest, TwoRanksFollowTheSingleProcessLossCurveWithinFloat32Noise) {
  auto single = fresh_dir("mpi-single"), ranks2 = fresh_dir("mpi-ranks2");
  auto r1 = run(train_args(single / "run", {}), single);
  ASSERT_EQ(r1.status, 0) << r1.err;
  auto r2 = run(concat(mpirun(2), train_args(ranks2 / "run", {})), ranks2);
  ASSERT_EQ(r2.status, 0) << r2.err;

  auto a = read_metrics(single / "run"), b = read_metrics(ranks2 / "run");
  ASSERT_EQ(a.size(), 200u);  // rank 0 alone writes metrics: a second writer would double the lines
  expect_same_curve(a, b);
  EXPECT_EQ(count_of(r2.out, "trained 200 steps"), 1u) << "rank 0 alone reports";
  EXPECT_NE(r2.out.find("data-parallel over 2 ranks"), std::string::npos);
  Checkpoint latest = load_checkpoint(ranks2 / "run" / "latest.safetensors");
  EXPECT_EQ(latest.step, 200);
  EXPECT_EQ(latest.metadata.at("ranks"), "2");
  fs::remove_all(single);
  fs::remove_all(ranks2);
}

TEST(MpiTrainTest, RunOfTwoRanksResumesOnOneAndOnThreeRanksAlongTheSameCurve) {
  // A constant learning rate (min_lr = lr, no warm-up), so that a run stopped by
  // --max-steps 60 and continued to 120 follows the straight 120-step run's schedule.
  const std::vector<std::string> flat = {"--set", "train.min_lr=0.01", "--set", "train.warmup_steps=0",
                                         "--set", "train.eval_interval=30", "--set", "train.checkpoint_interval=30"};
  auto dir = fresh_dir("mpi-resume");
  auto straight = run(train_args(dir / "straight", concat({"--max-steps", "120"}, flat)), dir);
  ASSERT_EQ(straight.status, 0) << straight.err;
  auto first = run(concat(mpirun(2), train_args(dir / "two", concat({"--max-steps", "60"}, flat))), dir);
  ASSERT_EQ(first.status, 0) << first.err;
  fs::copy(dir / "two", dir / "three");

  // One rank: the plain binary, no mpirun. Three ranks: 8 rows shared 2 + 3 + 3.
  auto on_one = run(train_args(dir / "two", concat({"--max-steps", "120", "--resume",
                                                    (dir / "two" / "latest.safetensors").string()}, flat)), dir);
  ASSERT_EQ(on_one.status, 0) << on_one.err;
  auto on_three = run(concat(mpirun(3), train_args(dir / "three", concat({"--max-steps", "120", "--resume",
                                                    (dir / "three" / "latest.safetensors").string()}, flat))), dir);
  ASSERT_EQ(on_three.status, 0) << on_three.err;

  auto a = read_metrics(dir / "straight");
  expect_same_curve(a, read_metrics(dir / "two"));
  expect_same_curve(a, read_metrics(dir / "three"));
  fs::remove_all(dir);
}

TEST(MpiTrainTest, KilledRankEndsTheJobNonZeroAndLatestStillLoads) {
  auto dir = fresh_dir("mpi-kill");
  pid_t job = spawn(concat(mpirun(2), train_args(dir / "run", {"--max-steps", "1000000"})), dir);
  ASSERT_TRUE(wait_for_step(dir / "run", 120)) << test::read_text(dir / "stderr.txt");  // past two checkpoints
  const pid_t rank1 = find_rank(job, 1);
  ASSERT_GT(rank1, 0);
  kill(rank1, SIGKILL);
  const int status = wait_exit_status(job);
  ASSERT_NE(status, -1) << "the job outlived a dead rank by " << kJobDeadlineS << " s";
  EXPECT_NE(status, 0);
  const std::string err = test::read_text(dir / "stderr.txt");
  EXPECT_NE(err.find("mini-gpt: error: rank 0 of 2: terminated by the MPI launcher"), std::string::npos) << err;
  Checkpoint latest = load_checkpoint(dir / "run" / "latest.safetensors");  // throws on a torn file
  EXPECT_GE(latest.step, 100);
  EXPECT_EQ(latest.step % 50, 0);  // tiny.json's checkpoint_interval
  EXPECT_TRUE(latest.has_optimizer_state());
  fs::remove_all(dir);
}

TEST(MpiTrainTest, StoppedRankMakesTheOthersGiveUpAfterMiniGptMpiTimeout) {
  auto dir = fresh_dir("mpi-stop");
  setenv("MINI_GPT_MPI_TIMEOUT", "2", 1);  // inherited by mpirun and its ranks
  pid_t job = spawn(concat(mpirun(2), train_args(dir / "run", {"--max-steps", "1000000"})), dir);
  unsetenv("MINI_GPT_MPI_TIMEOUT");
  ASSERT_TRUE(wait_for_step(dir / "run", 60)) << test::read_text(dir / "stderr.txt");  // past a checkpoint
  const pid_t rank1 = find_rank(job, 1);
  ASSERT_GT(rank1, 0);
  kill(rank1, SIGSTOP);  // alive but silent: only the timeout can notice
  const int status = wait_exit_status(job);
  kill(rank1, SIGKILL);  // (gone already when the job ended as it should)
  ASSERT_NE(status, -1) << "the job hung on a stopped rank";
  EXPECT_EQ(status, 1);
  const std::string err = test::read_text(dir / "stderr.txt");
  EXPECT_NE(err.find("mini-gpt: error: rank 0 of 2: waited 2 s in an MPI allreduce"), std::string::npos) << err;
  load_checkpoint(dir / "run" / "latest.safetensors");
  fs::remove_all(dir);
}

TEST(MpiTrainTest, Sigusr1ToMpirunStopsEveryRankAfterTheSameStepWithLatestWritten) {
  auto dir = fresh_dir("mpi-usr1");
  pid_t job = spawn(concat(mpirun(2), train_args(dir / "run", {"--max-steps", "1000000"})), dir);
  ASSERT_TRUE(wait_for_step(dir / "run", 5)) << test::read_text(dir / "stderr.txt");
  kill(job, SIGUSR1);  // mpirun forwards SIGUSR1 to every rank
  const int status = wait_exit_status(job);
  EXPECT_EQ(status, 130) << test::read_text(dir / "stderr.txt");
  Checkpoint latest = load_checkpoint(dir / "run" / "latest.safetensors");
  EXPECT_GE(latest.step, 5);
  EXPECT_EQ(read_metrics(dir / "run").size(), static_cast<size_t>(latest.step));
  fs::remove_all(dir);
}

// Rank 0 and rank 1 started with different settings (mpirun's "A : B" form): every rank
// refuses before the first step, with exit 2 and one line naming the key and both values;
// nothing is trained and no mismatched buffer reaches an allreduce (a different model
// shape or corpus used to end in "double free or corruption", exit 134).
TEST(MpiTrainTest, RanksStartedWithDifferentSettingsRefuseBeforeTheFirstStep) {
  auto dir = fresh_dir("mpi-disagree");
  // The shipped corpus with its lines in reverse order: the same vocabulary, other batches.
  std::string corpus = test::read_text(test::source_dir() / "data" / "corpus.txt");
  std::vector<std::string> lines;
  std::istringstream in(corpus);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  {
    std::ofstream out(dir / "reversed.txt");
    for (auto it = lines.rbegin(); it != lines.rend(); ++it) out << *it << "\n";
  }
  const std::string other_corpus = "data.path=" + (dir / "reversed.txt").string();
  struct Case {
    std::vector<std::string> rank1;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {{"--seed", "8"}, "train.seed is 7 on rank 0 but 8 on rank 1"},
      {{"--set", "train.lr=0.02"}, "train.lr is 0.01 on rank 0 but 0.02 on rank 1"},
      {{"--set", "model.block_size=32"}, "model.block_size is 16 on rank 0 but 32 on rank 1"},
      {{"--set", "model.n_embd=32"}, "model.n_embd is 16 on rank 0 but 32 on rank 1"},
      {{"--set", other_corpus}, "corpus is train "},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.expected);
    fs::remove_all(dir / "run");
    std::vector<std::string> args = concat(mpirun(1), train_args(dir / "run", {"--max-steps", "5"}));
    args = concat(args, {":", "-np", "1"});
    args = concat(args, train_args(dir / "run", concat({"--max-steps", "5"}, c.rank1)));
    auto r = run(args, dir);
    EXPECT_EQ(r.status, 2) << r.err;
    for (int rank = 0; rank < 2; ++rank) {
      const std::string line = "mini-gpt: error: rank " + std::to_string(rank) +
                               " of 2: ranks disagree before the first step: " + c.expected;
      EXPECT_EQ(count_of(r.err, line), 1u) << r.err;
    }
    EXPECT_EQ(count_of(r.err, "mini-gpt: error: "), 2u) << r.err;  // one line per rank, nothing else of ours
    EXPECT_EQ(r.err.find("step 1/"), std::string::npos) << "a step was taken: " << r.err;
    EXPECT_FALSE(fs::exists(dir / "run" / "metrics.jsonl"));
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace mg
