// The training run: seeded batches from the train split, AdamW with warm-up and cosine
// decay, global-norm clipping, periodic validation and probe accuracy, and a run
// directory (config.json, metrics.jsonl, latest and best checkpoints) that a resumed
// run continues bit for bit. Reports progress through a callback; prints nothing.
// Given a communicator of several ranks (mpirun), trains data-parallel: each rank takes
// a share of every global batch, gradients are summed over the ranks, and rank 0 alone
// writes the run directory and reports progress (jobs/data_parallel.h).
// train() drives a TrainingRun, whose parts are the run directory and resume (its
// constructor), one step, evaluation, and the checkpoint policy.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/random.h"
#include "data/batch_sampler.h"
#include "data/corpus.h"
#include "data/probe.h"
#include "dist/communicator.h"
#include "io/atomic_file.h"
#include "io/config.h"
#include "io/dir_lock.h"
#include "jobs/data_parallel.h"
#include "jobs/head_roles.h"
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
  std::vector<std::pair<std::string, double>> probe_accuracy_by_kind;  // (kind, accuracy), probe file order
};

struct TrainResult {
  int64_t step = 0;
  bool interrupted = false;  // stop_requested was seen: latest written, exit 130
  std::optional<double> final_val_loss, best_val_loss, probe_accuracy;
  std::vector<std::pair<std::string, double>> probe_accuracy_by_kind;  // at the last evaluation
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
  const std::atomic<bool>* stop_requested = nullptr;      // set by SIGINT or SIGTERM
  bool profile = false;  // time the steps per op family (TrainResult::profile)
  // The job's processes; null or a single rank: train alone, exactly as without MPI.
  Communicator* communicator = nullptr;
};

// One training run, step by step; train() is the loop over it (jobs/train.cpp, at the end).
class TrainingRun {
 public:
  // The run directory and resume: loads the corpus and checks the config against it;
  // rank 0 chooses, checks and locks the run directory (jobs/run_directory.h) and starts
  // the model fresh or from request.resume, its weights, AdamW moments, sampler and
  // dropout states, so that the run continues bit for bit; with several ranks, every rank
  // then continues from rank 0's state. REQUEST must outlive the run.
  explicit TrainingRun(const TrainRequest& request);
  TrainingRun(const TrainingRun&) = delete;
  TrainingRun& operator=(const TrainingRun&) = delete;

  bool finished() const { return step_ >= config_.train.max_steps; }
  // Ctrl-C or SIGTERM: a single process looks before each step; ranks learn it from the
  // exchange of the step just taken, all at the same step.
  bool stop_requested() const;

  // One optimizer step on the next global batch: forward, backward, with several ranks
  // the gradients summed over them (GradientExchange), clipping, AdamW. Error on a
  // non-finite loss, naming the last good checkpoint.
  TrainProgress step();

  // Evaluation, every train.eval_interval steps and at max_steps: the validation loss and
  // the probe accuracy (per kind) into PROGRESS, best.safetensors kept by the checkpoint
  // policy; returns each head's role scores for metrics.jsonl (rank 0, with a probe set).
  bool evaluation_due() const;
  nlohmann::json evaluate(TrainProgress& progress);

  // After every step, on rank 0: the metrics.jsonl line, latest.safetensors when the
  // checkpoint policy says so, and request.on_progress.
  void record(const TrainProgress& progress, const nlohmann::json& head_roles);

  // The end: latest.safetensors when the run stopped early (or took no step); the result.
  TrainResult finish();

 private:
  void resume_from(const std::filesystem::path& checkpoint);  // rank 0
  // The checkpoint policy: best.safetensors whenever the validation loss improves;
  // latest.safetensors every train.checkpoint_interval steps, at max_steps, and when a
  // stop request ends the run (then exit 130 or 143, cli/train_command.cpp).
  void keep_if_best(double val_loss);
  bool latest_due() const;
  void save(const char* name);  // rank 0; a state with non-finite weights is never written
  std::map<std::string, std::string> checkpoint_metadata() const;

  const TrainRequest& request_;
  SingleProcess alone_;
  Communicator& comm_;
  const bool distributed_, writer_;  // writer: rank 0 writes the run directory and reports
  Config config_;                    // resolved: vocab_size from the corpus, out_dir the run directory
  Corpus corpus_;
  std::vector<ProbeItem> probes_;
  RoleOptions role_options_;  // the probe prompts, each evaluation scoring the heads' roles on them
  RowStart row_start_;
  RowShare share_;  // this rank's rows of every global batch
  std::filesystem::path run_dir_;
  std::unique_ptr<DirectoryLock> lock_;  // rank 0: one writer per run directory
  Gpt model_;
  AdamW optimizer_;
  BatchSampler sampler_;
  Rng dropout_rng_;
  Rng rank_dropout_rng_;  // with several ranks: seeded per step by dropout_rng_ and the rank
  ForwardOptions forward_options_;
  int64_t step_ = 0, first_step_ = 0;  // steps completed; the step this process started at
  std::optional<double> best_val_;
  std::optional<AppendFile> metrics_;         // rank 0: metrics.jsonl
  std::vector<int32_t> inputs_, targets_;     // [B,T], the global batch
  std::optional<GradientExchange> gradients_;  // with several ranks
  bool stop_after_step_ = false;              // with several ranks: some rank was asked to stop
  std::chrono::steady_clock::time_point start_;
  double training_s_ = 0.0;  // time in training steps only, for tokens/s
  TrainResult result_;       // the evaluations' figures, as they come
};

TrainResult train(const TrainRequest& request);

}  // namespace mg
