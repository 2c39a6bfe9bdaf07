// The training run: seeded batches from the train split, AdamW with warm-up and cosine
// decay, global-norm clipping, periodic validation and probe accuracy, and a run
// directory (config.json, metrics.jsonl, latest and best checkpoints) that a resumed
// run continues bit for bit. Reports progress through a callback; prints nothing.
#pragma once

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>

#include "io/config.h"
#include "kernels/profile.h"
#include "tensor/tensor.h"

namespace mg {

struct TrainProgress {
  int64_t step = 0;       // steps completed
  int64_t max_steps = 0;
  double loss = 0.0;      // this step's training loss
  double lr = 0.0;
  double grad_norm = 0.0;
  double tokens_per_s = 0.0;  // over the steps of this process
  double elapsed_s = 0.0;
  std::optional<double> val_loss, probe_accuracy;  // on evaluation steps
};

struct TrainResult {
  int64_t step = 0;
  bool interrupted = false;  // stop_requested was seen: latest written, exit 130
  std::optional<double> final_val_loss, best_val_loss, probe_accuracy;
  double tokens_per_s = 0.0;
  double elapsed_s = 0.0;
  std::filesystem::path run_dir;
  // With TrainRequest::profile: where the training steps' time went, the first step of
  // the process (primitive creation, first allocations) left out when there were more.
  std::optional<ProfileReport> profile;
  TensorPoolStats tensor_pool;  // the storage pool at the end of the run
};

struct TrainRequest {
  Config config;                                // resolved, validated, data.path absolute
  std::optional<std::filesystem::path> resume;  // a training checkpoint
  std::function<void(const TrainProgress&)> on_progress;  // every step
  const std::atomic<bool>* stop_requested = nullptr;      // set by SIGINT
  bool profile = false;  // time the steps per op family (TrainResult::profile)
};

TrainResult train(const TrainRequest& request);

}  // namespace mg
