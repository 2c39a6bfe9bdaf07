// A training run followed while it trains (`serve --run DIR`): the lines metrics.jsonl gains
// are read from where the last poll stopped (report/run_curves.h turns them into the
// page's curves), and when latest.safetensors is replaced (another inode, size or mtime)
// the new checkpoint is loaded and served. A checkpoint that fails to load (truncated, a
// bad checksum, half written) leaves the last good model served and says why. The models
// the run kept at its evaluations (DIR/evals/, io/evaluation_models.h) are served on
// request, for the page's step slider, and the run's formation events (interp/formation.h,
// from metrics.jsonl and DIR/config.json's schedule) are marked on it. It reads those
// files of DIR and nothing else; it never writes. train and serve never include
// each other: this is their whole contact.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <filesystem>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "report/run_curves.h"
#include "serve/served_model.h"

namespace mg::serve {

class RunWatch {
 public:
  // Follows RUN_DIR; replaces SERVED's model on a new checkpoint, scored on PROBES. FLOOR:
  // the validation rows' entropy floor, when known, shown beside the validation loss.
  RunWatch(std::filesystem::path run_dir, ServedModel& served, const ProbeSet& probes, std::optional<double> floor);
  ~RunWatch();

  // Polls every INTERVAL_S on a thread of its own until stop() or destruction.
  void start(double interval_s);
  void stop();
  // One poll: the new lines, then the checkpoint (the thread's loop, and tests).
  void poll();

  // {"dir", "floor", "note", "curves": run_curves' JSON, "model": {"generation", "step",
  // "source", "reloads", "reload_error"}, "eval_models": [the steps kept in evals/],
  // "events": report/formation_format.h's events (without chains)}.
  std::string status_json() const;

  // The model the run kept at its evaluation STEP (evals/step_NNNNNNN.safetensors), as a
  // snapshot scored on the probe set; the last few asked are kept. InputError naming the
  // steps kept when there is none for STEP, or the file's fault when it does not load.
  std::shared_ptr<const ModelSnapshot> snapshot_at(int64_t step);

  ServedModel& served() const { return served_; }
  const ProbeSet& probes() const { return probes_; }
  const std::filesystem::path& dir() const { return dir_; }

 private:
  struct FileStamp {
    ino_t inode = 0;
    int64_t size = -1, mtime_ns = 0;
    bool operator==(const FileStamp&) const = default;
  };
  static std::optional<FileStamp> stamp(const std::filesystem::path& path);
  void read_new_lines();
  void check_checkpoint();

  std::filesystem::path dir_;
  ServedModel& served_;
  const ProbeSet& probes_;
  std::optional<double> floor_;

  mutable std::mutex mutex_;  // guards everything below
  RunCurves curves_;
  uint64_t offset_ = 0;        // bytes of metrics.jsonl read into curves_
  std::optional<FileStamp> metrics_stamp_, checkpoint_stamp_;
  std::string partial_;        // a line not yet ended by its newline
  bool skipping_ = false;      // inside a line past kMaxLineBytes, until its newline
  int64_t reloads_ = 0;
  std::string reload_error_;   // why the last replaced checkpoint was not loaded; "" after a good one
  std::string note_;           // why metrics.jsonl is not followed, if it is not
  std::optional<RunSchedule> schedule_;  // from DIR/config.json, once it is there
  nlohmann::ordered_json events_;        // the formation events (without chains), as last found
  int64_t events_for_ = -1;              // the evaluations they were found on
  std::optional<RunSchedule> events_schedule_;

  std::mutex replay_mutex_;  // guards the two below; held while a kept model loads
  std::map<int64_t, std::shared_ptr<const ModelSnapshot>> replay_;
  std::list<int64_t> replay_order_;  // the steps in replay_, the one asked longest ago first

  std::atomic<bool> stopping_{false};
  std::mutex wake_mutex_;
  std::condition_variable wake_;
  std::thread thread_;
};

}  // namespace mg::serve
