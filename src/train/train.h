// The train layer (src/train/): the training run and its parts, one file each: train (a step
// and the loop), setup, state, checkpoints, evaluation, threads, data_parallel, run_directory.
// It may include inference, distributed and the layers below them; never interp, report or
// cli. What a run records about its heads is cli's (cli/head_logging.cpp, handed in as
// TrainRequest::on_evaluation), so training knows nothing of interpretation.
//
// The training run: seeded batches from the train split, AdamW with warm-up and cosine
// decay, global-norm clipping, periodic validation and probe accuracy, and a run
// directory (config.json, metrics.jsonl, latest and best checkpoints) that a resumed
// run continues bit for bit. Reports progress through a callback; prints nothing.
// Given a communicator of several ranks (mpirun), trains data-parallel: each rank takes
// a share of every global batch, gradients are summed over the ranks, and rank 0 alone
// writes the run directory and reports progress (train/data_parallel.h).
#pragma once

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "distributed/communicator.h"
#include "inference/evaluate.h"
#include "io/config.h"
#include "kernels/profile.h"
#include "tensor/tensor.h"

namespace mg {

class Gpt;
class Vocab;
struct ProbeItem;

// What an evaluation hands the layer above (rank 0): the model as it stands, its
// vocabulary and the run's probe set (empty without data.probe_path).
struct EvaluationInputs {
  const Gpt& model;
  const Vocab& vocab;
  const std::vector<ProbeItem>& probes;
};

// The layer above's part of each evaluation: an object of fields added to that step's
// metrics.jsonl line (e.g. "head_roles", cli/head_logging.h), or null for none. The
// training run itself knows nothing of what they mean.
using EvaluationCallback = std::function<nlohmann::json(const EvaluationInputs&)>;

struct TrainProgress {
  int64_t step = 0;       // steps completed
  int64_t max_steps = 0;
  double loss = 0.0;      // this step's training loss
  double lr = 0.0;
  double grad_norm = 0.0;
  double tokens_per_s = 0.0;  // over the steps of this process
  double elapsed_s = 0.0;
  int threads = 0;            // the threads this step ran on (train/threads.h)
  std::optional<double> val_loss, probe_accuracy;  // on evaluation steps
  std::vector<std::pair<std::string, double>> probe_accuracy_by_kind;  // (kind, accuracy), probe file order
  std::vector<TagAccuracy> probe_accuracy_by_tag;  // the kinds with distractor tags, apart
};

struct TrainResult {
  int64_t step = 0;
  bool interrupted = false;  // stop_requested was seen: latest written, exit 130
  std::optional<double> final_val_loss, best_val_loss, probe_accuracy;
  std::vector<std::pair<std::string, double>> probe_accuracy_by_kind;  // at the last evaluation
  std::vector<TagAccuracy> probe_accuracy_by_tag;                      // at the last evaluation
  double tokens_per_s = 0.0;
  double elapsed_s = 0.0;
  std::filesystem::path run_dir;
  // With TrainRequest::profile: where the training steps' time went, the first step of
  // the process (primitive creation, first allocations) left out when there were more.
  std::optional<ProfileReport> profile;
  TensorPoolStats tensor_pool;  // the storage pool at the end of the run
  int ranks = 1;                // processes that trained together
  double allreduce_s = 0.0;     // with ranks > 1: time in the gradient allreduce, waits for peers included
  double training_s = 0.0;      // time in training steps, the allreduce included
  int64_t steps_run = 0;        // steps of this process (a resumed run's are after its checkpoint)
};

struct TrainRequest {
  Config config;                                // resolved, validated, data.path absolute
  std::optional<std::filesystem::path> resume;  // a training checkpoint
  // The run directory the user named (--out, --set train.out_dir). Without it a fresh run
  // writes into config.train.out_dir and a resumed one into its checkpoint's own folder;
  // with it a resumed run needs that folder or a new or empty one. Locked while training.
  std::optional<std::filesystem::path> out_dir;
  std::function<void(const TrainProgress&)> on_progress;  // every step
  EvaluationCallback on_evaluation;                       // rank 0, every evaluation, before best.safetensors
  const std::atomic<bool>* stop_requested = nullptr;      // set by SIGINT or SIGTERM
  bool profile = false;  // time the steps per op family (TrainResult::profile)
  // The job's processes; null or a single rank: train alone, exactly as without MPI.
  Communicator* communicator = nullptr;
};

TrainResult train(const TrainRequest& request);

}  // namespace mg
