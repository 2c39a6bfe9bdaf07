// What `mini-gpt train` does when the file system or the machine says no (issue 7): a run
// directory that cannot be created or written, a disk that fills up during a checkpoint
// write, temporaries left by a killed run, and a model too large for the memory. Each
// gives one line "mini-gpt: error: ..." naming the file or the figures, before training or
// without losing the last good checkpoint. The read-only and full-disk cases mount a small
// tmpfs; where mounting is not permitted they are skipped with the reason.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <sys/mount.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <vector>

#include "io/checkpoint.h"
#include "test_support.h"

namespace mg {
namespace {

namespace fs = std::filesystem;
using test::run_mini_gpt;

// A tmpfs mounted over `dir` for the length of one test.
class ScopedTmpfs {
 public:
  ScopedTmpfs(const fs::path& dir, const std::string& options) : dir_(dir) {
    fs::create_directories(dir);
    if (::mount("tmpfs", dir.c_str(), "tmpfs", 0, options.c_str()) == 0) mounted_ = true;
    else error_ = std::strerror(errno);
  }
  ~ScopedTmpfs() {
    if (mounted_) ::umount2(dir_.c_str(), MNT_DETACH);
  }
  ScopedTmpfs(const ScopedTmpfs&) = delete;
  ScopedTmpfs& operator=(const ScopedTmpfs&) = delete;

  bool mounted() const { return mounted_; }
  const std::string& error() const { return error_; }
  bool remount_read_only() {
    return ::mount(nullptr, dir_.c_str(), nullptr, MS_REMOUNT | MS_RDONLY, nullptr) == 0;
  }

 private:
  fs::path dir_;
  bool mounted_ = false;
  std::string error_;
};

class TrainIoTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = test::fresh_dir(::testing::UnitTest::GetInstance()->current_test_info()->name()); }
  void TearDown() override { fs::remove_all(dir_); }

  // `mini-gpt train` on configs/tiny.json, one thread, a checkpoint every step.
  test::CommandResult train(const fs::path& out, int64_t max_steps, std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {"train", "--config", (test::source_dir() / "configs" / "tiny.json").string(),
                                     "--out", out.string(), "--threads", "1", "--max-steps", std::to_string(max_steps),
                                     "--set", "train.checkpoint_interval=1"};
    args.insert(args.end(), extra.begin(), extra.end());
    return run_mini_gpt(args, dir_);
  }
  test::CommandResult resume(const fs::path& out, int64_t max_steps) {
    return train(out, max_steps, {"--resume", (out / "latest.safetensors").string()});
  }

  static void expect_one_line_error(const test::CommandResult& r, int status, const std::string& needle) {
    EXPECT_EQ(r.status, status) << r.err;
    EXPECT_EQ(r.err.rfind("mini-gpt: error: ", 0), 0u) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_NE(r.err.find(needle), std::string::npos) << "missing \"" << needle << "\" in: " << r.err;
  }
  // The names in `dir` that start with '.', i.e. temporaries of the writers (the run's
  // lock file, which stays, aside).
  static std::vector<std::string> hidden_files(const fs::path& dir) {
    std::vector<std::string> names;
    for (const auto& entry : fs::directory_iterator(dir))
      if (entry.path().filename().string().front() == '.' && entry.path().filename() != ".lock")
        names.push_back(entry.path().filename().string());
    return names;
  }
  fs::path dir_;
};

TEST_F(TrainIoTest, RunDirectoryUnderARegularFileIsRefusedBeforeTraining) {
  std::ofstream(dir_ / "file") << "not a folder";
  const fs::path out = dir_ / "file" / "run";
  auto r = train(out, 2);
  expect_one_line_error(r, 1, "cannot create run directory " + out.string() + ": Not a directory");
  EXPECT_EQ(test::read_text(dir_ / "file"), "not a folder");
}

TEST_F(TrainIoTest, ReadOnlyRunDirectoryIsRefusedBeforeTrainingAndKeepsTheLastCheckpoint) {
  ScopedTmpfs mount(dir_ / "mnt", "size=4m");
  if (!mount.mounted()) GTEST_SKIP() << "cannot mount a tmpfs here (" << mount.error() << ")";
  const fs::path run = dir_ / "mnt" / "run";
  auto first = train(run, 2);
  ASSERT_EQ(first.status, 0) << first.err;
  const std::string latest_before = test::read_text(run / "latest.safetensors");
  if (!mount.remount_read_only()) GTEST_SKIP() << "cannot remount the tmpfs read-only (" << std::strerror(errno) << ")";

  expect_one_line_error(resume(run, 4), 1, "run directory " + run.string() + " is not writable: Read-only file system");
  EXPECT_EQ(test::read_text(run / "latest.safetensors"), latest_before);
  EXPECT_EQ(load_checkpoint(run / "latest.safetensors").step, 2);

  const fs::path missing = dir_ / "mnt" / "new" / "run";
  expect_one_line_error(train(missing, 2), 1,
                        "cannot create run directory " + missing.string() + ": Read-only file system");
}

TEST_F(TrainIoTest, FullDiskFailsTheCheckpointWriteNamingItAndKeepsLatestWhole) {
  ScopedTmpfs mount(dir_ / "mnt", "size=2m");
  if (!mount.mounted()) GTEST_SKIP() << "cannot mount a tmpfs here (" << mount.error() << ")";
  const fs::path run = dir_ / "mnt" / "run";
  auto first = train(run, 2);
  ASSERT_EQ(first.status, 0) << first.err;
  const std::string latest_before = test::read_text(run / "latest.safetensors");
  constexpr int64_t kLeftFree = 32 << 10;  // room for metrics and config.json, not a checkpoint
  ASSERT_GT(static_cast<int64_t>(latest_before.size()), 2 * kLeftFree);

  // Fill the disk, then give back kLeftFree bytes.
  const fs::path filler = dir_ / "mnt" / "filler";
  const int fd = ::open(filler.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  ASSERT_GE(fd, 0) << std::strerror(errno);
  const std::vector<char> block(1 << 16, 'x');
  int64_t filled = 0;
  for (ssize_t n; (n = ::write(fd, block.data(), block.size())) > 0;) filled += n;
  const int write_errno = errno;
  ASSERT_EQ(write_errno, ENOSPC) << std::strerror(write_errno);
  ASSERT_EQ(::ftruncate(fd, filled - kLeftFree), 0) << std::strerror(errno);
  ::close(fd);

  // The resumed run rewrites metrics.jsonl and config.json, then fails at step 3's checkpoint.
  expect_one_line_error(resume(run, 4), 1,
                        "cannot write " + (run / "latest.safetensors").string() + ": No space left on device");
  EXPECT_EQ(test::read_text(run / "latest.safetensors"), latest_before);
  EXPECT_EQ(load_checkpoint(run / "latest.safetensors").step, 2);
  EXPECT_EQ(hidden_files(run), std::vector<std::string>{}) << "the temporary file was left behind";

  // With the space back, the same command continues the run.
  fs::remove(filler);
  auto again = resume(run, 4);
  ASSERT_EQ(again.status, 0) << again.err;
  EXPECT_EQ(load_checkpoint(run / "latest.safetensors").step, 4);
}

TEST_F(TrainIoTest, ResumeRemovesStaleTemporariesAndRefusesToLoadOne) {
  const fs::path run = dir_ / "run";
  auto first = train(run, 2);
  ASSERT_EQ(first.status, 0) << first.err;
  // What SIGKILLs during writes leave: a checkpoint cut short, a metrics copy, the probe.
  const std::string latest = test::read_text(run / "latest.safetensors");
  const fs::path cut_short = run / ".latest.safetensors.tmp.999999";
  std::ofstream(cut_short, std::ios::binary) << latest.substr(0, latest.size() / 2);
  std::ofstream(run / ".best.safetensors.tmp.123") << "";
  std::ofstream(run / ".metrics.jsonl.tmp") << "{\"step\": 1";
  std::ofstream(run / ".write-test") << "";
  // Files of other naming are the user's and stay.
  std::ofstream(run / ".notes") << "mine";
  std::ofstream(run / "latest.safetensors.tmp.backup") << "mine too";

  auto refused = train(run, 3, {"--resume", cut_short.string()});
  expect_one_line_error(refused, 2, cut_short.string() + " is the temporary file of an unfinished checkpoint write");

  auto resumed = resume(run, 3);
  ASSERT_EQ(resumed.status, 0) << resumed.err;
  EXPECT_EQ(hidden_files(run), std::vector<std::string>{".notes"});
  EXPECT_TRUE(fs::exists(run / "latest.safetensors.tmp.backup"));
  EXPECT_EQ(load_checkpoint(run / "latest.safetensors").step, 3);
}

TEST_F(TrainIoTest, ARunKilledBeforeItsFirstCheckpointIsNotOfferedForResume) {
  fs::create_directories(dir_ / "run");
  std::ofstream(dir_ / "run" / "metrics.jsonl") << "{\"step\": 1, \"loss\": 4.3}\n";
  expect_one_line_error(train(dir_ / "run", 2), 2, "holds metrics.jsonl but no latest.safetensors to resume from");
  EXPECT_EQ(test::read_text(dir_ / "run" / "metrics.jsonl"), "{\"step\": 1, \"loss\": 4.3}\n");
}

TEST_F(TrainIoTest, AModelTooLargeForTheMemoryIsRefusedWithTheFiguresBeforeTheRunDirectoryExists) {
  const fs::path run = dir_ / "huge";
  auto r = train(run, 2, {"--set", "model.n_embd=65536", "--set", "model.n_layer=512"});
  expect_one_line_error(r, 2, "this config needs about ");
  EXPECT_NE(r.err.find(" TB of memory to train (2.64e+13 parameters"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("but this machine has "), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(run));
}

}  // namespace
}  // namespace mg
