// The run directory's rules (train/run_directory.h): choosing the folder, refusing another
// run's, locking it, and clearing what a killed run left behind.
#include "train/run_directory.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <limits>
#include <vector>

#include "core/error.h"
#include "data/text_file.h"
#include "io/atomic_file.h"
#include "io/evaluation_models.h"
#include "data/json_limits.h"

namespace mg {
namespace {

namespace fs = std::filesystem;

// The files a run directory holds. Each is replaced through a hidden temporary beside
// it, and ".write-test" probes the folder; a SIGKILL or a power cut between such a file's
// creation and its rename or removal leaves it behind. ".lock" (io/dir_lock.h) is the
// run's lock: the kernel releases it when the holder dies, so it is never stale.
constexpr const char* kRunFiles[] = {"latest.safetensors", "best.safetensors", "metrics.jsonl", "config.json"};
constexpr const char* kWriteProbe = ".write-test";

// ".step_NNNNNNN.safetensors.tmp.PID": an evaluation model's write a kill cut short.
bool is_evaluation_temporary(const std::string& name) {
  const size_t tmp = name.find(".tmp");
  return name.size() > 1 && name[0] == '.' && tmp != std::string::npos &&
         evaluation_model_step(name.substr(1, tmp - 1)) >= 0;
}

// Such leftovers may be cut short at any byte, so they are never loaded; a starting or
// resuming run removes them so that nobody later takes one for a checkpoint. (It holds
// the folder's lock then, so no other run's temporaries can be among them.)
// The evaluation models' folder (io/evaluation_models.h) is swept the same way.
void remove_stale_temporary_files(const fs::path& dir) {
  std::error_code ec;
  std::vector<fs::path> stale;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    if (is_temporary_file_name(it->path().filename().string())) stale.push_back(it->path());
  if (ec) throw IoError("cannot list run directory " + dir.string() + ": " + ec.message());
  const fs::path evals = dir / kEvaluationsFolder;
  std::error_code absent;  // no evals/ yet (a run before its first evaluation): nothing to sweep
  if (fs::is_directory(fs::symlink_status(evals, absent))) {
    for (fs::directory_iterator it(evals, ec), end; !ec && it != end; it.increment(ec))
      if (is_evaluation_temporary(it->path().filename().string())) stale.push_back(it->path());
    if (ec) throw IoError("cannot list " + evals.string() + ": " + ec.message());
  }
  for (const auto& path : stale)
    if (!fs::remove(path, ec) && ec)
      throw IoError("cannot remove stale temporary file " + path.string() + ": " + ec.message());
}

// Fails before training, not at the first checkpoint, when the folder cannot be created
// or written (a path under a regular file, a read-only mount), naming the reason. Nothing
// is written into it here: its lock comes first (open_run_dir).
void create_run_dir(const fs::path& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw IoError("cannot create run directory " + dir.string() + ": " + ec.message());
  if (::access(dir.c_str(), W_OK) != 0)
    throw IoError("run directory " + dir.string() + " is not writable: " + std::strerror(errno));
}

// Under the lock: a file is created and removed, so that a folder the checks above passed
// but the file system refuses (a full disk's inodes, a quota) fails now.
void probe_run_dir(const fs::path& dir) {
  const fs::path probe = dir / kWriteProbe;
  ::unlink(probe.c_str());  // a leftover (or anything planted there) is not opened: O_EXCL
  const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0) throw IoError("run directory " + dir.string() + " is not writable: " + std::strerror(errno));
  ::close(fd);
  std::error_code ec;
  fs::remove(probe, ec);
}

// A fresh run never overwrites another run's checkpoints, metrics or config.
void refuse_to_overwrite(const fs::path& dir) {
  const fs::path latest = dir / "latest.safetensors";
  std::vector<std::string> names(std::begin(kRunFiles), std::end(kRunFiles));
  names.push_back(kEvaluationsFolder);
  for (const std::string& name : names) {
    if (!fs::exists(dir / name)) continue;
    if (fs::exists(latest))
      throw InputError("run directory " + dir.string() + " already holds a run (" + name +
                       "); continue it with --resume " + latest.string() + " or choose another --out");
    // Killed before its first checkpoint: there is nothing to resume from.
    throw InputError("run directory " + dir.string() + " already holds " + name +
                     " but no latest.safetensors to resume from; remove the folder or choose another --out");
  }
}

// The entries of DIR other than its lock file (none when DIR does not exist).
std::vector<std::string> folder_entries(const fs::path& dir) {
  std::vector<std::string> names;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return names;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    if (it->path().filename() != kLockFileName) names.push_back(it->path().filename().string());
  if (ec) throw IoError("cannot list run directory " + dir.string() + ": " + ec.message());
  return names;
}

// The checkpoint's own folder, the run directory it belongs to.
fs::path folder_of(const fs::path& checkpoint) {
  return checkpoint.has_parent_path() ? checkpoint.parent_path() : fs::path(".");
}

// A resumed run writing outside its checkpoint's folder needs a new or empty one.
void refuse_foreign_folder(const fs::path& dir, const fs::path& checkpoint) {
  const std::vector<std::string> entries = folder_entries(dir);
  if (entries.empty()) return;
  throw InputError("run directory " + dir.string() + " is not the folder of --resume " + checkpoint.string() +
                   " and already holds " + entries.front() + (entries.size() > 1 ? " and more" : "") +
                   "; a resumed run continues in its checkpoint's folder (leave out --out) or in a new or "
                   "empty --out");
}

}  // namespace

bool is_temporary_file_name(const std::string& name) {
  if (name == kWriteProbe) return true;
  for (const char* run_file : kRunFiles) {
    const std::string prefix = std::string(".") + run_file + ".tmp";
    if (name.rfind(prefix, 0) == 0 && (name.size() == prefix.size() || name[prefix.size()] == '.')) return true;
  }
  return false;
}

fs::path choose_run_dir(const std::optional<fs::path>& resume, const std::optional<fs::path>& out_dir,
                        const fs::path& config_out_dir) {
  if (!resume) return out_dir ? *out_dir : config_out_dir;
  const fs::path own = folder_of(*resume);
  if (!out_dir) return own;
  std::error_code ec;
  if (fs::equivalent(*out_dir, own, ec)) return own;
  refuse_foreign_folder(*out_dir, *resume);
  return *out_dir;
}

std::unique_ptr<DirectoryLock> open_run_dir(const fs::path& dir, const std::optional<fs::path>& resume) {
  auto refuse_others = [&] {
    if (!resume) refuse_to_overwrite(dir);
    else if (dir != folder_of(*resume)) refuse_foreign_folder(dir, *resume);
  };
  // The lock is taken before anything is written into the folder: two runs started into
  // one new folder race to create it, and the second is refused naming the first's pid,
  // not by the first's write test.
  refuse_others();
  create_run_dir(dir);
  auto lock = std::make_unique<DirectoryLock>(dir, "run directory");
  refuse_others();
  probe_run_dir(dir);
  remove_stale_temporary_files(dir);
  return lock;
}

void remove_later_evaluation_models(const fs::path& run_dir, int64_t step) {
  for (const EvaluationModel& m : list_evaluation_models(run_dir)) {
    if (m.step <= step) continue;
    std::error_code ec;
    if (!fs::remove(m.path, ec) && ec)
      throw IoError("cannot remove " + m.path.string() + " (past the resumed step " + std::to_string(step) +
                    "): " + ec.message());
  }
}

// The longest metrics.jsonl line a resume keeps: a line of the largest model's head roles
// is a few hundred kilobytes.
constexpr size_t kMaxMetricsLine = size_t(16) << 20;

void truncate_metrics(const fs::path& path, int64_t step) {
  std::error_code ec;
  if (!fs::exists(fs::symlink_status(path, ec))) return;
  // Read through RegularFile: a FIFO or device planted as metrics.jsonl is refused, not read.
  RegularFile file(path, "metrics file", std::numeric_limits<uint64_t>::max());
  std::string pending, kept;
  auto keep_if_due = [&](const std::string& line) {
    // Lines are ours, but bounded anyway: a deep line is dropped like a cut one.
    nlohmann::json json;
    try {
      json = parse_json_bounded(line);
    } catch (const InputError&) {
      return;
    }
    if (json.is_object() && json.contains("step") && json["step"].is_number_integer() &&
        json["step"].get<int64_t>() <= step)
      kept += line + "\n";
  };
  // A line longer than kMaxMetricsLine is none of ours: it is dropped as it streams past,
  // never held whole (a planted 400 MB line cost 532 MB).
  bool skipping = false;  // inside such a line, until its newline
  std::vector<char> buffer(size_t(1) << 20);
  for (size_t n; (n = file.read_some(buffer.data(), buffer.size())) > 0;) {
    pending.append(buffer.data(), n);
    size_t start = 0;
    for (size_t end; (end = pending.find('\n', start)) != std::string::npos; start = end + 1) {
      if (!skipping) keep_if_due(pending.substr(start, end - start));
      skipping = false;
    }
    pending.erase(0, start);
    if (pending.size() > kMaxMetricsLine) {
      pending.clear();
      skipping = true;
    }
  }
  if (!pending.empty() && !skipping) keep_if_due(pending);
  write_text_atomically(path, kept);
}

}  // namespace mg
