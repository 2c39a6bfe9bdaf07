// The run configuration: JSON with sections "model", "train" and "data" (SPEC sections
// 1 and 3), resolved against defaults, overridden by --set, validated, and written
// back out whole (config.json, a checkpoint's metadata).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "nn/model_config.h"

namespace mg {

struct TrainConfig {
  int64_t batch_size = 32;
  int64_t max_steps = 5000;
  double lr = 1e-3;
  double min_lr = 1e-4;
  int64_t warmup_steps = 100;
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
};

struct Config {
  ModelConfig model;
  TrainConfig train;
  DataConfig data;
};

// Reads FILE; relative data paths resolve against the file's folder. InputError names
// the file, the key and the value at fault (unknown key, wrong type, out of range).
Config load_config(const std::filesystem::path& file);

// Parses a JSON object already in memory; relative paths resolve against base_dir.
Config config_from_json(const nlohmann::json& json, const std::filesystem::path& base_dir);

// The same; every InputError reads "ORIGIN: ..." (a file name, or "CKPT: __metadata__.config").
// The two-argument form uses the origin "config".
Config config_from_json(const nlohmann::json& json, const std::filesystem::path& base_dir,
                        const std::string& origin);

// Applies "section.key=value" (value parsed as JSON, else taken as a string); relative
// data paths resolve against the current folder. Then re-validates.
void apply_override(Config& config, const std::string& assignment);

// Every key, resolved, as {"model": {...}, "train": {...}, "data": {...}}.
nlohmann::json config_to_json(const Config& config);

// Range checks that need no corpus (n_embd % n_head, lr > 0, ...); InputError on the first fault.
void validate_config(const Config& config);

}  // namespace mg
