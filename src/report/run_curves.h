// A run's metrics.jsonl as the pages draw it: the training loss (thinned to at most ~1,000
// means of consecutive steps), each evaluation's validation loss, probe accuracy overall and
// per kind and every head's role scores (at most ~1,000 evaluations drawn). The head
// explorer reads a finished file (run_curves); `mini-gpt serve --run` follows a growing
// one, a line at a time (RunCurves::add_line), so both pages get the same JSON.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "interp/formation.h"

namespace mg {

class RunCurves {
 public:
  // One line of metrics.jsonl (without its newline). The page gets only finite numbers in
  // the shapes it draws: a line that does not parse (one nested 100,000 deep, which crashed
  // the parser) or has no finite step is skipped and counted, any other value out of shape
  // is left out. A blank line is not counted.
  void add_line(std::string_view line);
  int64_t lines() const { return lines_; }
  int64_t evaluations() const { return static_cast<int64_t>(evals_.size()); }
  // {"dir", "lines", "skipped", "loss_bucket", "evals_total", "eval_stride", "train": {"step",
  // "loss"}, "evals": [{"step", "val_loss", "probe_accuracy", "by_kind", "head_roles"}]}.
  nlohmann::ordered_json to_json(const std::string& dir) const;
  // Every evaluation as the formation events read it (interp/formation.h), all of them,
  // unthinned; by_tag from probe_accuracy_by_tag.
  const std::vector<RunEvaluation>& evaluation_records() const { return records_; }

 private:
  std::vector<std::pair<double, double>> losses_;  // (step, loss)
  std::vector<nlohmann::ordered_json> evals_;
  std::vector<RunEvaluation> records_;
  int64_t lines_ = 0, skipped_ = 0;
};

// The largest metrics.jsonl read or followed (256 MiB).
inline constexpr uint64_t kMaxMetricsBytes = uint64_t(256) << 20;

// RUN_DIR's metrics.jsonl, whole. InputError when it cannot be read or holds no lines.
RunCurves read_run_curves(const std::filesystem::path& run_dir);
// Its JSON (RunCurves::to_json).
nlohmann::ordered_json run_curves(const std::filesystem::path& run_dir);

}  // namespace mg
