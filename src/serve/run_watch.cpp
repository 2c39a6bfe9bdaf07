// Following a training run: metrics.jsonl by offset, latest.safetensors by its stamp
// (serve/run_watch.h).
#include "serve/run_watch.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "inference/model_store.h"

namespace mg::serve {
namespace {

// A line longer than this is not metrics.jsonl's (mini-gpt's longest, an evaluation with
// 64 heads' roles, is about 30 KB): it is skipped, not kept growing in memory.
constexpr size_t kMaxLineBytes = size_t(4) << 20;
// Read at most this much per poll, so that a poll of a long run's file stays short.
constexpr size_t kMaxReadBytes = size_t(16) << 20;

}  // namespace

RunWatch::RunWatch(std::filesystem::path run_dir, ServedModel& served, const ProbeSet& probes, std::optional<double> floor)
    : dir_(std::move(run_dir)), served_(served), probes_(probes), floor_(floor) {
  // The checkpoint served at start is the one there now (or another file): only a later
  // replacement of latest.safetensors is loaded.
  checkpoint_stamp_ = stamp(dir_ / "latest.safetensors");
}

RunWatch::~RunWatch() { stop(); }

std::optional<RunWatch::FileStamp> RunWatch::stamp(const std::filesystem::path& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return std::nullopt;
  return FileStamp{st.st_ino, static_cast<int64_t>(st.st_size),
                   static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec};
}

void RunWatch::start(double interval_s) {
  poll();
  thread_ = std::thread([this, interval_s] {
    const auto interval = std::chrono::duration<double>(interval_s);
    std::unique_lock lock(wake_mutex_);
    while (!stopping_.load()) {
      wake_.wait_for(lock, interval, [this] { return stopping_.load(); });
      if (stopping_.load()) break;
      lock.unlock();
      poll();
      lock.lock();
    }
  });
}

void RunWatch::stop() {
  {
    std::lock_guard lock(wake_mutex_);
    stopping_.store(true);
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void RunWatch::poll() {
  read_new_lines();
  check_checkpoint();
}

void RunWatch::read_new_lines() {
  const std::filesystem::path path = dir_ / "metrics.jsonl";
  std::lock_guard lock(mutex_);
  const std::optional<FileStamp> now = stamp(path);
  if (!now) {
    note_ = "no metrics.jsonl yet";
    return;
  }
  // Another file (a run started again in the folder) or a shorter one: read from the start.
  if (metrics_stamp_ && (metrics_stamp_->inode != now->inode || now->size < static_cast<int64_t>(offset_))) {
    curves_ = RunCurves();
    offset_ = 0;
    partial_.clear();
    skipping_ = false;
  }
  metrics_stamp_ = now;
  note_.clear();
  if (static_cast<uint64_t>(now->size) == offset_) return;
  if (offset_ >= kMaxMetricsBytes) {
    note_ = "metrics.jsonl is past " + std::to_string(kMaxMetricsBytes >> 20) + " MiB: later lines are not followed";
    return;
  }
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    note_ = std::string("cannot read metrics.jsonl: ") + std::strerror(errno);
    return;
  }
  const size_t want = std::min<uint64_t>(static_cast<uint64_t>(now->size) - offset_, kMaxReadBytes);
  std::vector<char> bytes(want);
  ssize_t got = 0;
  do got = ::pread(fd, bytes.data(), want, static_cast<off_t>(offset_));
  while (got < 0 && errno == EINTR);
  ::close(fd);
  if (got <= 0) return;
  offset_ += static_cast<uint64_t>(got);
  std::string_view fresh(bytes.data(), static_cast<size_t>(got));
  // Whole lines go to the curves; the tail without its newline waits for the next poll.
  // A line past kMaxLineBytes is skipped whole, however many polls it arrives over: once
  // it passes the limit its bytes are dropped up to its newline (skipping_), so that its
  // end is never joined to its start.
  for (size_t newline; (newline = fresh.find('\n')) != std::string_view::npos; fresh.remove_prefix(newline + 1)) {
    if (!skipping_ && partial_.size() + newline <= kMaxLineBytes) {
      partial_.append(fresh.substr(0, newline));
      curves_.add_line(partial_);
    } else {
      curves_.add_line("{");  // counted as a line skipped
    }
    partial_.clear();
    skipping_ = false;
  }
  if (skipping_ || partial_.size() + fresh.size() > kMaxLineBytes) {
    partial_.clear();
    skipping_ = true;
  } else {
    partial_.append(fresh);
  }
}

void RunWatch::check_checkpoint() {
  const std::filesystem::path path = dir_ / "latest.safetensors";
  const std::optional<FileStamp> now = stamp(path);
  {
    std::lock_guard lock(mutex_);
    if (!now || now == checkpoint_stamp_) return;
    checkpoint_stamp_ = now;
  }
  // Loading and scoring take a while: no lock held, requests go on with the old model.
  std::string error;
  try {
    const auto before = served_.current();  // none while serve waits for the run's first checkpoint
    const int64_t generation = before ? before->generation + 1 : 1;
    served_.replace(make_snapshot(load_model(path), probes_, path.string(), generation));
  } catch (const std::exception& e) {
    error = e.what();
  }
  std::lock_guard lock(mutex_);
  if (error.empty()) {
    ++reloads_;
    reload_error_.clear();
  } else {
    const auto served = served_.current();
    reload_error_ = "the replaced " + path.string() + " did not load (" + error_text(error) + "); " +
                    (served ? "still serving step " + std::to_string(served->step) + " from " + served->source
                            : std::string("no model served yet"));
  }
}

std::string RunWatch::status_json() const {
  const auto served = served_.current();
  std::lock_guard lock(mutex_);
  nlohmann::ordered_json out = {{"dir", dir_.string()}, {"floor", floor_ ? nlohmann::ordered_json(*floor_) : nullptr},
                                {"note", note_}, {"curves", curves_.to_json(dir_.string())}};
  // generation 0, no step: no checkpoint yet (serve --run started beside a new run).
  out["model"] = {{"generation", served ? served->generation : 0},
                  {"step", served ? nlohmann::ordered_json(served->step) : nlohmann::ordered_json(nullptr)},
                  {"source", served ? served->source : std::string()}, {"reloads", reloads_},
                  {"reload_error", reload_error_}};
  return out.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

}  // namespace mg::serve
