// The training run (train/train.h): one step (TrainingStep, here: batch, forward, backward,
// clipping, AdamW), and train(), the loop over the run's parts (TrainingRun); the other
// parts each in its own file of train/: the setup and resume (setup), the evaluation
// (evaluation), the checkpoint policy (checkpoints) and the thread count (threads), over
// the state they share (state.h). What an evaluation adds beyond its figures comes from
// the layer above (TrainRequest::on_evaluation).
#include "train/train.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/random.h"
#include "data/probe.h"
#include "io/atomic_file.h"
#include "io/dir_lock.h"
#include "kernels/profile.h"
#include "kernels/runtime.h"
#include "nn/gpt.h"
#include "train/checkpoints.h"
#include "train/data_parallel.h"
#include "train/evaluation.h"
#include "train/run_directory.h"
#include "train/setup.h"
#include "train/state.h"
#include "train/threads.h"

namespace mg {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// One optimizer step: the next global batch, forward and backward on this rank's rows, with
// several ranks the gradients summed over them (train/data_parallel.h's GradientExchange, the
// distributed reduction), clipping and AdamW.
class TrainingStep {
 public:
  // SHARE: this rank's rows of every global batch. LAST_GOOD names the checkpoint an error
  // points to. CONFIG, STATE and COMM must outlive the step.
  TrainingStep(const Config& config, TrainingState& state, Communicator& comm, RowShare share,
               std::filesystem::path last_good)
      : config_(config),
        state_(state),
        comm_(comm),
        distributed_(comm.size() > 1),
        share_(share),
        last_good_(std::move(last_good)),
        inputs_(static_cast<size_t>(config.train.batch_size * config.model.block_size)),
        targets_(inputs_.size()) {
    if (distributed_)
      gradients_.emplace(comm_, state_.model.parameters(),
                         static_cast<double>(share_.rows) / static_cast<double>(config.train.batch_size));
    forward_options_.training = true;
    forward_options_.dropout_rng = &state_.dropout_rng;
  }

  struct Figures {
    double loss = 0.0;  // the global batch's
    double lr = 0.0;
    double grad_norm = 0.0;  // before clipping
  };
  // Takes step state.step + 1 (and counts it). STOP_REQUESTED (may be null): set when this
  // process is asked to stop; ranks tell each other in the exchange. Error on a non-finite
  // loss.
  Figures take(const std::atomic<bool>* stop_requested) {
    const TrainConfig& tc = config_.train;
    const int64_t T = config_.model.block_size;
    const double lr = learning_rate(state_.step, tc.lr, tc.min_lr, tc.warmup_steps, tc.max_steps);
    {
      ProfileScope scope(OpFamily::data);
      // data.random_rows_from_step: story rows only before it (a function of the step, so a
      // resumed run draws as the uninterrupted one).
      state_.sampler.set_anywhere_rows(state_.step >= config_.data.random_rows_from_step ? state_.anywhere_rows : 0);
      // data.early_stories_to_step: the early stories' story rows only before it (the same way).
      state_.sampler.set_early_stories(state_.step < config_.data.early_stories_to_step);
      state_.sampler.next(inputs_, targets_);
    }
    state_.model.parameters().zero_grad();
    if (distributed_) {
      // Each rank draws its own dropout masks for its rows, from a generator seeded per step
      // by the shared one and the rank (dropout then cannot match a single process's masks,
      // which run over the whole batch in one order).
      rank_dropout_rng_.seed_with(state_.dropout_rng.next_u64() ^ (0x9e3779b97f4a7c15ULL * (comm_.rank() + 1)));
      forward_options_.dropout_rng = &rank_dropout_rng_;
    }
    // This rank's rows of the global batch, [rows,T] (all of it for a single process).
    const std::span<const int32_t> rank_inputs(inputs_.data() + share_.first * T, static_cast<size_t>(share_.rows * T));
    const std::span<const int32_t> rank_targets(targets_.data() + share_.first * T,
                                                static_cast<size_t>(share_.rows * T));
    Var loss = state_.model.loss(rank_inputs, rank_targets, share_.rows, T, forward_options_);
    double loss_value = loss.value()[0];
    auto check_finite = [&](double value) {
      if (!std::isfinite(value))
        throw Error("training loss is " + format_double(value) + " at step " + std::to_string(state_.step + 1) +
                    "; stopped, the last good checkpoint is " + last_good_.string() +
                    " (try a lower train.lr)");
    };
    if (!distributed_) check_finite(loss_value);  // (ranks check the global loss, all alike)
    backward(loss);
    loss = Var();
    if (distributed_) {  // the global batch's loss and gradient, on every rank
      const auto reduced = gradients_->exchange(loss_value, stop_requested && stop_requested->load());
      loss_value = reduced.loss;
      stop_after_step_ = reduced.stop_requested;
      check_finite(loss_value);
    }
    if (state_.step < tc.freeze_block0_qk_to_step) {
      // train.freeze_block0_qk_to_step: block 0's scores stay the initialisation's (a
      // curriculum: a head that reads names by content then forms in a later block, where
      // its query can carry what earlier blocks moved forward; data/learning.md).
      const BlockWeights& first = state_.model.weights().blocks[0];
      for (Var projection : {first.q_proj, first.k_proj})
        if (projection.has_grad())
          for (float& g : projection.grad().span()) g = 0.0f;
    }
    double grad_norm = 0.0;
    {
      ProfileScope scope(OpFamily::optimizer);
      grad_norm = clip_grad_norm(state_.model.parameters(), tc.grad_clip);
      state_.optimizer.step(lr);
    }
    ++state_.step;
    return {loss_value, lr, grad_norm};
  }

  // With several ranks: some rank was asked to stop, so all stop after this step.
  bool stop_after_step() const { return stop_after_step_; }
  double allreduce_seconds() const { return gradients_ ? gradients_->allreduce_seconds() : 0.0; }

 private:
  const Config& config_;
  TrainingState& state_;
  Communicator& comm_;
  const bool distributed_;
  RowShare share_;
  std::filesystem::path last_good_;
  std::vector<int32_t> inputs_, targets_;      // [B,T], the global batch
  ForwardOptions forward_options_;
  Rng rank_dropout_rng_;                       // with several ranks: seeded per step by the shared one and the rank
  std::optional<GradientExchange> gradients_;  // with several ranks
  bool stop_after_step_ = false;
};

// One training run, step by step; train() is the loop over it (at the end of this file).
class TrainingRun {
 public:
  // The run directory and resume: loads the corpus and checks the config against it;
  // rank 0 chooses, checks and locks the run directory (train/run_directory.h) and starts
  // the model fresh or from request.resume, its weights, AdamW moments, sampler and
  // dropout states, so that the run continues bit for bit; with several ranks, every rank
  // then continues from rank 0's state. REQUEST must outlive the run.
  explicit TrainingRun(const TrainRequest& request)
      : request_(request),
        comm_(request.communicator ? *request.communicator : alone_),
        distributed_(comm_.size() > 1),
        writer_(comm_.rank() == 0),
        config_(request.config),
        corpus_(load_training_corpus(config_, request, comm_)),
        probes_(config_.data.probe_path.empty() ? std::vector<ProbeItem>() : load_probe_set(config_.data.probe_path)),
        row_start_(resolve_row_start(config_.data, corpus_.vocab)),
        share_(batch_rows(config_.train.batch_size, comm_.rank(), comm_.size())),
        run_dir_(choose_run_dir(request.resume, request.out_dir, config_.train.out_dir)),
        lock_(writer_ ? open_run_dir(run_dir_, request.resume) : nullptr),
        state_(config_, corpus_.train, training_row_start(row_start_, config_, corpus_.vocab)),
        checkpoints_(config_, corpus_.vocab, run_dir_, writer_, comm_.size()) {
    // Ranks started with different settings would average gradients of different runs, or
    // (another model shape, another corpus) exchange buffers of different sizes: refused
    // on every rank before the first collective that carries them.
    if (distributed_) check_ranks_agree(comm_, rank_settings(config_, corpus_, state_.model.parameters()));
    config_.train.out_dir = run_dir_.string();  // config.json and the checkpoints say where the run is
    if (request.resume && writer_) {
      resume_training(*request.resume, config_, corpus_.vocab, run_dir_, state_);
    } else if (!request.resume) {
      Rng init_rng(config_.train.seed);
      state_.model.initialize(init_rng);
      if (writer_) write_text_atomically(run_dir_ / "metrics.jsonl", "");
    }
    if (distributed_) {  // every rank continues from rank 0's state, fresh or resumed
      SharedState shared{state_.step, state_.sampler.state(), state_.dropout_rng.state_string(), state_.best_val};
      broadcast_training_state(comm_, state_.optimizer, shared);
      state_.step = shared.step;
      state_.sampler.restore(shared.sampler_state);
      state_.dropout_rng.set_state_string(shared.dropout_rng_state);
      state_.best_val = shared.best_val;
    }
    if (writer_) {
      write_text_atomically(run_dir_ / "config.json", config_to_json(config_).dump(2) + "\n");
      metrics_.emplace(run_dir_ / "metrics.jsonl");
    }
    step_.emplace(config_, state_, comm_, share_, run_dir_ / "latest.safetensors");
    // A count the user gave, ranks (each holds its share of the cores) and a profile
    // (its figures per op would mix two counts) keep their count.
    if (config_.train.threads == 0 && !distributed_ && !request.profile) threads_.emplace(num_threads());
    first_step_ = state_.step;
    result_.run_dir = run_dir_;
    start_ = Clock::now();
    set_profiling(request.profile);
    profile_pause();  // each step resumes it; evaluations and checkpoints are not charged
  }
  TrainingRun(const TrainingRun&) = delete;
  TrainingRun& operator=(const TrainingRun&) = delete;

  bool finished() const { return state_.step >= config_.train.max_steps; }

  // Ctrl-C or SIGTERM: a single process looks before each step; ranks learn it from the
  // exchange of the step just taken, all at the same step.
  bool stop_requested() const {
    if (distributed_) return step_->stop_after_step();
    return stop_requested_here();
  }

  // One optimizer step (TrainingStep, above), timed and profiled.
  TrainProgress step() {
    const TrainConfig& tc = config_.train;
    // The process's first step creates the GEMM primitives and fills the storage pool:
    // a profile of a longer run leaves it out.
    if (state_.step == first_step_ + 1 && tc.max_steps - first_step_ > 1) profile_clear();
    profile_resume();
    const int threads = threads_ ? threads_->threads_for_next_step() : num_threads();
    if (threads != num_threads()) set_num_threads(threads);
    const auto step_start = Clock::now();
    const TrainingStep::Figures figures = step_->take(request_.stop_requested);
    const double step_s = std::chrono::duration<double>(Clock::now() - step_start).count();
    training_s_ += step_s;
    if (threads_) threads_->record(step_s);
    profile_count_step();
    profile_pause();

    TrainProgress progress;
    progress.step = state_.step;
    progress.max_steps = tc.max_steps;
    progress.loss = figures.loss;
    progress.lr = figures.lr;
    progress.grad_norm = figures.grad_norm;
    progress.elapsed_s = elapsed_s();
    progress.tokens_per_s = tokens_per_s();
    progress.threads = threads;
    return progress;
  }

  // Evaluation, every train.eval_interval steps and at max_steps: the validation loss and
  // the probe accuracy (per kind) into PROGRESS, best.safetensors kept by the checkpoint
  // policy; returns request.on_evaluation's fields for metrics.jsonl (rank 0).
  bool evaluation_due() const {
    return state_.step % config_.train.eval_interval == 0 || state_.step == config_.train.max_steps;
  }
  nlohmann::json evaluate(TrainProgress& progress) {
    const EvaluationFigures figures =
        evaluate_training(state_.model, corpus_, probes_, config_.train, row_start_, comm_);
    const ProbeScore& probe_score = figures.probe;
    if (!probes_.empty()) {
      progress.probe_accuracy = probe_score.accuracy();
      for (size_t k = 0; k < probe_score.kinds.size(); ++k)
        progress.probe_accuracy_by_kind.emplace_back(probe_score.kinds[k], probe_score.kind_accuracy(k));
      result_.probe_accuracy_by_kind = progress.probe_accuracy_by_kind;
      progress.probe_accuracy_by_tag = tag_accuracies(probe_score);
      result_.probe_accuracy_by_tag = progress.probe_accuracy_by_tag;
    }
    progress.val_loss = figures.val_loss;
    result_.final_val_loss = figures.val_loss;
    result_.probe_accuracy = progress.probe_accuracy;
    nlohmann::json fields;  // the layer above's (cli/head_logging.h: head_roles)
    // On the writer only: every rank holds the same weights, and only the writer logs.
    if (writer_ && request_.on_evaluation) fields = request_.on_evaluation({state_.model, corpus_.vocab, probes_});
    checkpoints_.keep_if_best(state_, figures.val_loss);
    if (writer_) checkpoints_.keep_evaluation(state_);
    return fields;
  }

  // After every step, on rank 0: the metrics.jsonl line, latest.safetensors when the
  // checkpoint policy says so, and request.on_progress.
  void record(const TrainProgress& progress, const nlohmann::json& evaluation_fields) {
    if (!writer_) return;
    nlohmann::json line = {{"step", progress.step},         {"lr", progress.lr},
                           {"loss", progress.loss},         {"grad_norm", progress.grad_norm},
                           {"tokens_per_s", progress.tokens_per_s}, {"elapsed_s", progress.elapsed_s},
                           {"threads", progress.threads}};
    if (progress.val_loss) line["val_loss"] = *progress.val_loss;
    if (progress.probe_accuracy) line["probe_accuracy"] = *progress.probe_accuracy;
    if (!progress.probe_accuracy_by_kind.empty()) {
      nlohmann::json by_kind = nlohmann::json::object();
      for (const auto& [kind, accuracy] : progress.probe_accuracy_by_kind) by_kind[kind] = accuracy;
      line["probe_accuracy_by_kind"] = by_kind;
    }
    if (!progress.probe_accuracy_by_tag.empty()) {  // {"who": {"no_distractor": x, "distractors": y}, ...}
      nlohmann::json by_tag = nlohmann::json::object();
      for (const TagAccuracy& t : progress.probe_accuracy_by_tag)
        by_tag[t.kind] = {{"no_distractor", t.no_distractor}, {"distractors", t.distractors}};
      line["probe_accuracy_by_tag"] = by_tag;
    }
    if (evaluation_fields.is_object())
      for (const auto& [key, value] : evaluation_fields.items()) line[key] = value;
    metrics_->append(line.dump() + "\n");
    if (checkpoints_.latest_due(state_.step)) checkpoints_.save(state_, "latest.safetensors");
    if (request_.on_progress) request_.on_progress(progress);
  }

  // The end: latest.safetensors when the run stopped early (or took no step); the result.
  TrainResult finish() {
    result_.interrupted = !finished();  // the loop ends early only on a stop request
    if (writer_ && (result_.interrupted || state_.step == first_step_)) checkpoints_.save(state_, "latest.safetensors");
    if (request_.profile) result_.profile = profile_snapshot();
    set_profiling(false);
    result_.tensor_pool = tensor_pool_stats();
    result_.step = state_.step;
    result_.best_val_loss = state_.best_val;
    result_.ranks = comm_.size();
    result_.allreduce_s = step_->allreduce_seconds();
    result_.training_s = training_s_;
    result_.steps_run = state_.step - first_step_;
    result_.elapsed_s = elapsed_s();
    result_.tokens_per_s = tokens_per_s();
    return result_;
  }

 private:
  bool stop_requested_here() const { return request_.stop_requested && request_.stop_requested->load(); }
  double elapsed_s() const { return std::chrono::duration<double>(Clock::now() - start_).count(); }
  // Over this process's steps, their time only.
  double tokens_per_s() const {
    const int64_t tokens = (state_.step - first_step_) * config_.train.batch_size * config_.model.block_size;
    return static_cast<double>(tokens) / std::max(training_s_, 1e-9);
  }

  const TrainRequest& request_;
  SingleProcess alone_;
  Communicator& comm_;
  const bool distributed_, writer_;  // writer: rank 0 writes the run directory and reports
  Config config_;                    // resolved: vocab_size from the corpus, out_dir the run directory
  Corpus corpus_;
  std::vector<ProbeItem> probes_;
  RowStart row_start_;  // the validation rows' (training's adds data.random_row_fraction)
  RowShare share_;  // this rank's rows of every global batch
  fs::path run_dir_;
  std::unique_ptr<DirectoryLock> lock_;  // rank 0: one writer per run directory
  TrainingState state_;                  // model, optimizer, sampler, dropout, step, best val loss
  CheckpointPolicy checkpoints_;
  std::optional<TrainingStep> step_;     // once the state is final (resumed, shared by the ranks)
  std::optional<StepThreadChooser> threads_;  // with --threads 0 on one process
  int64_t first_step_ = 0;               // the step this process started at
  std::optional<AppendFile> metrics_;    // rank 0: metrics.jsonl
  Clock::time_point start_;
  double training_s_ = 0.0;  // time in training steps only, for tokens/s
  TrainResult result_;       // the evaluations' figures, as they come
};

}  // namespace

TrainResult train(const TrainRequest& request) {
  TrainingRun run(request);
  while (!run.finished() && !run.stop_requested()) {
    TrainProgress progress = run.step();
    run.record(progress, run.evaluation_due() ? run.evaluate(progress) : nlohmann::json());
  }
  return run.finish();
}

}  // namespace mg
