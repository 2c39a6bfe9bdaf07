// The run configuration: JSON with sections "model", "train" and "data" (docs/config.md),
// resolved against defaults, overridden by --set, validated, and written
// back out whole (config.json, a checkpoint's metadata).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/limits.h"
#include "model_spec/model_config.h"

namespace mg {

struct TrainConfig {
  int64_t batch_size = 32;
  int64_t max_steps = 5000;
  double lr = 1e-3;
  double min_lr = 1e-4;
  int64_t warmup_steps = 100;
  // Before this step block 0's query and key projections get no gradient (it is zeroed
  // before clipping; weight decay still shrinks them): block 0's attention keeps the
  // initialisation's scores, so the heads that read by content form in later blocks.
  int64_t freeze_block0_qk_to_step = 0;
  double weight_decay = 0.1;
  double beta1 = 0.9;
  double beta2 = 0.99;
  double eps = 1e-8;
  double grad_clip = 1.0;  // global-norm limit; 0 turns clipping off
  int64_t eval_interval = 250;
  int64_t eval_batches = 20;
  int64_t checkpoint_interval = 500;
  uint64_t seed = 1337;
  std::string out_dir = "runs/default";
  int64_t threads = 0;  // 0: all cores
  std::string backend;  // "" : the measured default
};

struct DataConfig {
  std::string path;  // absolute once resolved
  double val_fraction = 0.1;
  std::string probe_path;  // probe set; "" when the corpus has none
  // Where a training or validation row starts: "random" (any symbol) or "story" (right
  // after a newline, so a row holds one story from its start: data/README.md).
  std::string row_start = "random";
  // With row_start "story": the share of every training batch's rows (rounded to whole
  // rows) that start anywhere instead, so the model also reads windows that begin
  // mid-story (validation rows stay story rows, whose floor is exact).
  double random_row_fraction = 0.0;
  // The first training step whose batches hold those rows: before it every row is a story
  // row (a curriculum: the look-ups form on whole stories, then the model learns to read
  // windows that begin mid-story).
  int64_t random_rows_from_step = 0;
  // With row_start "story": before step early_stories_to_step, story rows start only at
  // stories whose first symbol is one of these ("" for any story): one kind of story first
  // (a curriculum; in the shipped corpus "小" picks the holds stories, the ten colours the
  // belongs stories, data/README.md).
  std::string early_story_starts;
  int64_t early_stories_to_step = 0;
};

struct Config {
  ModelConfig model;
  TrainConfig train;
  DataConfig data;
};

// A config file is a regular file of at most this size (1 MB; mini-gpt's are under 1 kB).
inline constexpr uint64_t kMaxConfigBytes = uint64_t(1) << 20;

// Reads FILE; relative data paths resolve against the file's folder. InputError names
// the file, the key and the value at fault (unknown key, wrong type, out of range).
Config load_config(const std::filesystem::path& file);

// The same without the range checks (types and keys are checked): for a caller that
// applies overrides first and then validates the whole (apply_overrides).
Config read_config_file(const std::filesystem::path& file);

// Parses a JSON object already in memory; relative paths resolve against base_dir. Every
// InputError reads "ORIGIN: ..." (a file name, or "CKPT: __metadata__.config").
Config config_from_json(const nlohmann::json& json, const std::filesystem::path& base_dir,
                        const std::string& origin = "config");

// Applies "section.key=value" (value parsed as JSON, else taken as a string); relative
// data paths resolve against the current folder. Then re-validates. On any error the
// config is left as it was.
void apply_override(Config& config, const std::string& assignment);

// Applies every assignment in order, then validates the result once, so the order of
// the overrides never matters (n_embd before n_head before position, lr before min_lr).
// A key's type is checked as it is set ("--set A: ..."); a range fault of the result
// reads "ORIGIN: ..." (e.g. "configs/x.json with --set"). On any error config is unchanged.
void apply_overrides(Config& config, const std::vector<std::string>& assignments, const std::string& origin);

// Sets one key from a typed value (a command-line flag such as --out or --seed), with
// the key's type checked but no validation; OPTION names it in errors ("--out").
void set_config_value(Config& config, const std::string& name, const nlohmann::json& value,
                      const std::string& option);

// Every key, resolved, as {"model": {...}, "train": {...}, "data": {...}}.
nlohmann::json config_to_json(const Config& config);

// Range checks that need no corpus (n_embd % n_head, lr > 0, thread and step counts
// within their bounds, every string valid UTF-8 without NUL, ...); InputError on the first fault.
void validate_config(const Config& config);

// Step counts (max_steps, warmup, intervals) at most this: 10^12 steps, far beyond any run,
// keeps every step * batch * block product inside an int64.
inline constexpr int64_t kMaxStepCount = 1'000'000'000'000;

}  // namespace mg
