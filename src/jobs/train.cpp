// The training run (jobs/train.h): its setup and resume, one step, evaluation, the
// checkpoint policy, and train(), the loop over them.
#include "jobs/train.h"

#include <algorithm>
#include <cerrno>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <map>
#include <memory>
#include <sstream>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/random.h"
#include "data/batch_sampler.h"
#include "data/corpus.h"
#include "data/probe.h"
#include "io/atomic_file.h"
#include "io/dir_lock.h"
#include "io/json_text.h"
#include "io/memory_budget.h"
#include "jobs/data_parallel.h"
#include "jobs/evaluate.h"
#include "jobs/head_roles.h"
#include "jobs/model_store.h"
#include "jobs/run_directory.h"
#include "kernels/runtime.h"

namespace mg {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// The validation batches are drawn from this seed at every evaluation, so successive
// val losses of a run score the same windows and are comparable.
constexpr uint64_t kValidationSeedOffset = 0x5eed0fe7a1ULL;

// best_val_loss as the writer printed it (%.17g), or "" for none; anything else is refused.
std::optional<double> parse_best_val_loss(const std::string& text, const std::string& origin) {
  if (text.empty()) return std::nullopt;
  char* end = nullptr;
  errno = 0;
  const double value = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size() || errno == ERANGE || !std::isfinite(value) || std::isspace(
          static_cast<unsigned char>(text.front())))
    throw InputError(origin + ": __metadata__.best_val_loss must be a finite number or \"\", found " +
                     json_excerpt(text));
  return value;
}

// The validation loss scores eval_batches x batch_size windows drawn with replacement;
// beyond a few times the split's distinct windows that buys no precision, only time
// (1e12 batches would never finish), so the count is bounded by the data.
void check_eval_batches(const Config& config, int64_t val_symbols) {
  constexpr int64_t kOversample = 4;
  const int64_t windows = std::max<int64_t>(val_symbols - config.model.block_size, 1);
  const int64_t limit = std::max<int64_t>(1, kOversample * windows / config.train.batch_size);
  if (config.train.eval_batches > limit)
    throw InputError("train.eval_batches = " + std::to_string(config.train.eval_batches) + " draws " +
                     std::to_string(config.train.batch_size) + " windows per batch from a validation split of " +
                     std::to_string(windows) + " windows; at most " + std::to_string(limit) +
                     " batches (" + std::to_string(kOversample) + " times the split) are allowed");
}

// The threads and GEMM backend, the checks that need no data, then the corpus, CONFIG's
// vocabulary size from it and the checks against it: all before the model or the run
// directory exists.
Corpus load_training_corpus(Config& config, const TrainRequest& request, const Communicator& comm) {
  // "All cores" for a rank is its share of the machine's cores: ranks on one machine
  // each spinning an OpenMP pool over every core would slow each other down many times.
  int threads = static_cast<int>(config.train.threads);
  if (threads == 0 && comm.size() > 1) threads = std::max(1, hardware_threads() / comm.local_size());
  set_num_threads(threads);
  set_gemm_backend(config.train.backend.empty() ? default_gemm_backend() : parse_gemm_backend(config.train.backend));

  if (config.data.path.empty())
    throw InputError("data.path is not set: the config must name a corpus file (or pass --set data.path=FILE)");
  if (request.resume && is_temporary_file_name(request.resume->filename().string()))
    throw InputError(request.resume->string() + " is the temporary file of an unfinished checkpoint write, not a " +
                     "checkpoint; resume from latest.safetensors beside it");
  Corpus corpus = load_corpus(config.data.path, config.data.val_fraction, config.model.block_size);
  config.model.vocab_size = corpus.vocab.size();
  check_eval_batches(config, corpus.val.size());
  check_training_memory(config);
  return corpus;
}

// Every evaluation also scores each head's role on the probe prompts (jobs/head_roles.h),
// so metrics.jsonl shows when a head became what it is.
RoleOptions probe_role_options(const Vocab& vocab, const std::vector<ProbeItem>& probes, int64_t block_size) {
  RoleOptions options;
  options.texts = probe_texts(vocab, probes, block_size);
  options.texts_description = "the probe prompts";
  options.probes = &probes;
  return options;
}

// data.row_start as the validation sampler's RowStart: "story" rows start right after a
// newline.
RowStart resolve_row_start(const DataConfig& data, const Vocab& vocab) {
  if (data.row_start != "story") return RowStart::anywhere();
  const auto newline = vocab.find(U'\n');
  if (!newline)
    throw InputError("data.row_start \"story\" needs one story per line, but " + data.path + " has no newline");
  return RowStart::after(*newline);
}

// The training sampler's: VALIDATION's, with data.random_row_fraction of each batch's
// rows drawn anywhere.
RowStart training_row_start(RowStart validation, const Config& config) {
  if (validation.after_id >= 0)
    validation.anywhere_rows =
        std::llround(config.data.random_row_fraction * static_cast<double>(config.train.batch_size));
  return validation;
}

std::string format_double(double v) {
  std::ostringstream out;
  out.precision(17);
  out << v;
  return out.str();
}

// One training run, step by step; train() is the loop over it (at the end of this file).
class TrainingRun {
 public:
  // The run directory and resume: loads the corpus and checks the config against it;
  // rank 0 chooses, checks and locks the run directory (jobs/run_directory.h) and starts
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
        role_options_(probe_role_options(corpus_.vocab, probes_, config_.model.block_size)),
        row_start_(resolve_row_start(config_.data, corpus_.vocab)),
        share_(batch_rows(config_.train.batch_size, comm_.rank(), comm_.size())),
        run_dir_(choose_run_dir(request.resume, request.out_dir, config_.train.out_dir)),
        lock_(writer_ ? open_run_dir(run_dir_, request.resume) : nullptr),
        model_(config_.model),
        optimizer_(model_.parameters(), {config_.train.beta1, config_.train.beta2, config_.train.eps,
                                         config_.train.weight_decay}),
        sampler_(corpus_.train, config_.model.block_size, config_.train.batch_size, config_.train.seed,
                 training_row_start(row_start_, config_)),
        anywhere_rows_(training_row_start(row_start_, config_).anywhere_rows),
        dropout_rng_(config_.train.seed ^ 0xd409u),
        inputs_(static_cast<size_t>(config_.train.batch_size * config_.model.block_size)),
        targets_(inputs_.size()) {
    const TrainConfig& tc = config_.train;
    config_.train.out_dir = run_dir_.string();  // config.json and the checkpoints say where the run is
    if (request.resume && writer_) {
      resume_from(*request.resume);
    } else if (!request.resume) {
      Rng init_rng(tc.seed);
      model_.initialize(init_rng);
      if (writer_) write_text_atomically(run_dir_ / "metrics.jsonl", "");
    }
    if (distributed_) {  // every rank continues from rank 0's state, fresh or resumed
      SharedState state{step_, sampler_.state(), dropout_rng_.state_string(), best_val_};
      broadcast_training_state(comm_, optimizer_, state);
      step_ = state.step;
      sampler_.restore(state.sampler_state);
      dropout_rng_.set_state_string(state.dropout_rng_state);
      best_val_ = state.best_val;
    }
    if (writer_) {
      write_text_atomically(run_dir_ / "config.json", config_to_json(config_).dump(2) + "\n");
      metrics_.emplace(run_dir_ / "metrics.jsonl");
    }
    if (distributed_)
      gradients_.emplace(comm_, model_.parameters(),
                         static_cast<double>(share_.rows) / static_cast<double>(tc.batch_size));
    forward_options_.training = true;
    forward_options_.dropout_rng = &dropout_rng_;
    first_step_ = step_;
    result_.run_dir = run_dir_;
    start_ = Clock::now();
    set_profiling(request.profile);
    profile_pause();  // each step resumes it; evaluations and checkpoints are not charged
  }
  TrainingRun(const TrainingRun&) = delete;
  TrainingRun& operator=(const TrainingRun&) = delete;

  bool finished() const { return step_ >= config_.train.max_steps; }

  // Ctrl-C or SIGTERM: a single process looks before each step; ranks learn it from the
  // exchange of the step just taken, all at the same step.
  bool stop_requested() const {
    if (distributed_) return stop_after_step_;
    return request_.stop_requested && request_.stop_requested->load();
  }

  // One optimizer step on the next global batch: forward, backward, with several ranks
  // the gradients summed over them (GradientExchange), clipping, AdamW. Error on a
  // non-finite loss, naming the last good checkpoint.
  TrainProgress step() {
    const TrainConfig& tc = config_.train;
    const int64_t T = config_.model.block_size;
    // The process's first step creates the GEMM primitives and fills the storage pool:
    // a profile of a longer run leaves it out.
    if (step_ == first_step_ + 1 && tc.max_steps - first_step_ > 1) profile_clear();
    profile_resume();
    const auto step_start = Clock::now();
    const double lr = learning_rate(step_, tc.lr, tc.min_lr, tc.warmup_steps, tc.max_steps);
    {
      ProfileScope scope(OpFamily::data);
      // data.random_rows_from_step: story rows only before it (a function of the step, so a
      // resumed run draws as the uninterrupted one).
      sampler_.set_anywhere_rows(step_ >= config_.data.random_rows_from_step ? anywhere_rows_ : 0);
      sampler_.next(inputs_, targets_);
    }
    model_.parameters().zero_grad();
    if (distributed_) {
      // Each rank draws its own dropout masks for its rows, from a generator seeded per step
      // by the shared one and the rank (dropout then cannot match a single process's masks,
      // which run over the whole batch in one order).
      rank_dropout_rng_.seed_with(dropout_rng_.next_u64() ^ (0x9e3779b97f4a7c15ULL * (comm_.rank() + 1)));
      forward_options_.dropout_rng = &rank_dropout_rng_;
    }
    // This rank's rows of the global batch, [rows,T] (all of it for a single process).
    const std::span<const int32_t> rank_inputs(inputs_.data() + share_.first * T, static_cast<size_t>(share_.rows * T));
    const std::span<const int32_t> rank_targets(targets_.data() + share_.first * T,
                                                static_cast<size_t>(share_.rows * T));
    Var loss = model_.loss(rank_inputs, rank_targets, share_.rows, T, forward_options_);
    double loss_value = loss.value()[0];
    auto check_finite = [&](double value) {
      if (!std::isfinite(value))
        throw Error("training loss is " + format_double(value) + " at step " + std::to_string(step_ + 1) +
                    "; stopped, the last good checkpoint is " + (run_dir_ / "latest.safetensors").string() +
                    " (try a lower train.lr)");
    };
    if (!distributed_) check_finite(loss_value);  // (ranks check the global loss, all alike)
    backward(loss);
    loss = Var();
    if (distributed_) {  // the global batch's loss and gradient, on every rank
      const auto reduced = gradients_->exchange(loss_value, request_.stop_requested && request_.stop_requested->load());
      loss_value = reduced.loss;
      stop_after_step_ = reduced.stop_requested;
      check_finite(loss_value);
    }
    double grad_norm = 0.0;
    {
      ProfileScope scope(OpFamily::optimizer);
      grad_norm = clip_grad_norm(model_.parameters(), tc.grad_clip);
      optimizer_.step(lr);
    }
    ++step_;
    training_s_ += std::chrono::duration<double>(Clock::now() - step_start).count();
    profile_count_step();
    profile_pause();

    TrainProgress progress;
    progress.step = step_;
    progress.max_steps = tc.max_steps;
    progress.loss = loss_value;
    progress.lr = lr;
    progress.grad_norm = grad_norm;
    progress.elapsed_s = elapsed_s();
    progress.tokens_per_s = tokens_per_s();
    return progress;
  }

  // Evaluation, every train.eval_interval steps and at max_steps: the validation loss and
  // the probe accuracy (per kind) into PROGRESS, best.safetensors kept by the checkpoint
  // policy; returns each head's role scores for metrics.jsonl (rank 0, with a probe set).
  bool evaluation_due() const { return step_ % config_.train.eval_interval == 0 || step_ == config_.train.max_steps; }
  nlohmann::json evaluate(TrainProgress& progress) {
    const TrainConfig& tc = config_.train;
    const uint64_t val_seed = tc.seed + kValidationSeedOffset;
    double val = 0.0;
    ProbeScore probe_score;
    if (!distributed_) {
      val = sampled_loss(model_, corpus_.val, tc.batch_size, tc.eval_batches, val_seed, row_start_);
      if (!probes_.empty()) probe_score = score_probe(model_, corpus_.vocab, probes_);
    } else {  // each rank scores a share of the batches and probes; the sums add up
      const EvalShare eval_share{comm_.rank(), comm_.size()};
      if (!probes_.empty()) probe_score = score_probe(model_, corpus_.vocab, probes_, eval_share);
      // [val loss sum, right answers, right answers per kind]
      std::vector<double> sums{sampled_loss_sum(model_, corpus_.val, tc.batch_size, tc.eval_batches, val_seed,
                                                eval_share, row_start_),
                               static_cast<double>(probe_score.correct)};
      for (int64_t c : probe_score.kind_correct) sums.push_back(static_cast<double>(c));
      comm_.allreduce_sum(sums.data(), static_cast<int64_t>(sums.size()));
      val = sums[0] / static_cast<double>(tc.eval_batches);
      probe_score.correct = std::llround(sums[1]);
      for (size_t k = 0; k < probe_score.kind_correct.size(); ++k)
        probe_score.kind_correct[k] = std::llround(sums[2 + k]);
    }
    if (!probes_.empty()) {
      progress.probe_accuracy = probe_score.accuracy();
      for (size_t k = 0; k < probe_score.kinds.size(); ++k)
        progress.probe_accuracy_by_kind.emplace_back(probe_score.kinds[k], probe_score.kind_accuracy(k));
      result_.probe_accuracy_by_kind = progress.probe_accuracy_by_kind;
    }
    progress.val_loss = val;
    result_.final_val_loss = val;
    result_.probe_accuracy = progress.probe_accuracy;
    nlohmann::json head_roles = nlohmann::json::array();  // [{layer, head, scores...}]
    // On the writer only: every rank holds the same weights, and only the writer logs.
    if (writer_ && !probes_.empty()) {
      for (const HeadRoleScores& head : score_head_roles(model_, corpus_.vocab, role_options_).heads) {
        nlohmann::json scores = head_roles_json(head);
        // Ablation is inspect-heads' and eval's, not every evaluation's: a probe scoring per head.
        scores.erase("accuracy_drop");
        scores.erase("accuracy_drop_by_kind");
        scores["layer"] = head.layer;
        scores["head"] = head.head;
        head_roles.push_back(std::move(scores));
      }
    }
    keep_if_best(val);
    return head_roles;
  }

  // After every step, on rank 0: the metrics.jsonl line, latest.safetensors when the
  // checkpoint policy says so, and request.on_progress.
  void record(const TrainProgress& progress, const nlohmann::json& head_roles) {
    if (!writer_) return;
    nlohmann::json line = {{"step", progress.step},         {"lr", progress.lr},
                           {"loss", progress.loss},         {"grad_norm", progress.grad_norm},
                           {"tokens_per_s", progress.tokens_per_s}, {"elapsed_s", progress.elapsed_s}};
    if (progress.val_loss) line["val_loss"] = *progress.val_loss;
    if (progress.probe_accuracy) line["probe_accuracy"] = *progress.probe_accuracy;
    if (!progress.probe_accuracy_by_kind.empty()) {
      nlohmann::json by_kind = nlohmann::json::object();
      for (const auto& [kind, accuracy] : progress.probe_accuracy_by_kind) by_kind[kind] = accuracy;
      line["probe_accuracy_by_kind"] = by_kind;
    }
    if (!head_roles.empty()) line["head_roles"] = head_roles;
    metrics_->append(line.dump() + "\n");
    if (latest_due()) save("latest.safetensors");
    if (request_.on_progress) request_.on_progress(progress);
  }

  // The end: latest.safetensors when the run stopped early (or took no step); the result.
  TrainResult finish() {
    result_.interrupted = !finished();  // the loop ends early only on a stop request
    if (writer_ && (result_.interrupted || step_ == first_step_)) save("latest.safetensors");
    if (request_.profile) result_.profile = profile_snapshot();
    set_profiling(false);
    result_.tensor_pool = tensor_pool_stats();
    result_.step = step_;
    result_.best_val_loss = best_val_;
    result_.ranks = comm_.size();
    result_.allreduce_s = gradients_ ? gradients_->allreduce_seconds() : 0.0;
    result_.training_s = training_s_;
    result_.steps_run = step_ - first_step_;
    result_.elapsed_s = elapsed_s();
    result_.tokens_per_s = tokens_per_s();
    return result_;
  }

 private:
  void resume_from(const fs::path& checkpoint) {  // rank 0
    const std::string origin = checkpoint.string();
    LoadedModel saved = load_model(checkpoint);
    if (config_to_json(saved.config)["model"] != config_to_json(config_)["model"])
      throw InputError(origin + ": its model config differs from this run's (" +
                       config_to_json(saved.config)["model"].dump() + ")");
    if (saved.vocab.symbols() != corpus_.vocab.symbols())
      throw InputError(origin + ": its vocabulary differs from the corpus " + config_.data.path);
    for (auto& p : model_.parameters().all()) p.var.value().copy_from(saved.model.parameters().get(p.name).value());
    if (!restore_moments(saved.checkpoint, optimizer_))
      throw InputError(origin + ": not a training checkpoint (no optimizer moments)");
    const auto& meta = saved.checkpoint.metadata;
    step_ = saved.checkpoint.step;
    const int64_t max_steps = config_.train.max_steps;
    if (max_steps <= step_)
      throw InputError(origin + " is at step " + std::to_string(step_) + " and train.max_steps (--max-steps) is " +
                       std::to_string(max_steps) + ": a resumed run continues up to max_steps, so there is "
                       "nothing to train; pass a --max-steps above " + std::to_string(step_));
    optimizer_.set_steps_taken(step_);
    // The states are checked by their readers; errors gain the file and the key.
    auto restore = [&](const char* key, const auto& apply) {
      try {
        auto it = meta.find(key);
        if (it == meta.end()) throw InputError(origin + ": metadata lacks \"" + key + "\"");
        apply(it->second);
      } catch (const InputError& e) {
        throw InputError(origin + ": __metadata__." + key + ": " + e.what());
      }
    };
    restore("sampler_state", [&](const std::string& text) { sampler_.restore(text); });
    restore("dropout_rng_state", [&](const std::string& text) { dropout_rng_.set_state_string(text); });
    if (auto it = meta.find("best_val_loss"); it != meta.end()) best_val_ = parse_best_val_loss(it->second, origin);
    truncate_metrics(run_dir_ / "metrics.jsonl", step_);
  }

  double elapsed_s() const { return std::chrono::duration<double>(Clock::now() - start_).count(); }
  // Over this process's steps, their time only.
  double tokens_per_s() const {
    const int64_t tokens = (step_ - first_step_) * config_.train.batch_size * config_.model.block_size;
    return static_cast<double>(tokens) / std::max(training_s_, 1e-9);
  }

  // The checkpoint policy: best.safetensors whenever the validation loss improves;
  // latest.safetensors every train.checkpoint_interval steps, at max_steps, and when a
  // stop request ends the run (then exit 130 or 143, cli/train_command.cpp).
  void keep_if_best(double val_loss) {
    if (best_val_ && !(val_loss < *best_val_)) return;
    best_val_ = val_loss;
    if (writer_) save("best.safetensors");
  }
  bool latest_due() const {
    return step_ % config_.train.checkpoint_interval == 0 || step_ == config_.train.max_steps;
  }

  void save(const char* name) {  // rank 0
    // A step can leave non-finite weights behind a finite loss; such a state is never
    // written over a good checkpoint.
    for (const auto& p : model_.parameters().all())
      for (float v : p.var.value().span())
        if (!std::isfinite(v))
          throw Error("parameter " + p.name + " became non-finite at step " + std::to_string(step_) +
                      "; stopped, the last good checkpoint is " + (run_dir_ / "latest.safetensors").string() +
                      " (try a lower train.lr)");
    save_model(run_dir_ / name, config_, corpus_.vocab, step_, model_, &optimizer_, checkpoint_metadata());
  }
  std::map<std::string, std::string> checkpoint_metadata() const {
    // The sampler draws the global batch on every rank, so its state is the job's and a
    // run resumes from it with any number of ranks.
    std::map<std::string, std::string> extra{
        {"sampler_state", sampler_.state()},
        {"dropout_rng_state", dropout_rng_.state_string()},
        {"best_val_loss", best_val_ ? format_double(*best_val_) : ""},
        {"backend", std::string(backend_name(gemm_backend()))},
    };
    if (distributed_) extra["ranks"] = std::to_string(comm_.size());
    return extra;
  }

  const TrainRequest& request_;
  SingleProcess alone_;
  Communicator& comm_;
  const bool distributed_, writer_;  // writer: rank 0 writes the run directory and reports
  Config config_;                    // resolved: vocab_size from the corpus, out_dir the run directory
  Corpus corpus_;
  std::vector<ProbeItem> probes_;
  RoleOptions role_options_;  // the probe prompts, each evaluation scoring the heads' roles on them
  RowStart row_start_;  // the validation rows' (training's adds data.random_row_fraction)
  RowShare share_;  // this rank's rows of every global batch
  fs::path run_dir_;
  std::unique_ptr<DirectoryLock> lock_;  // rank 0: one writer per run directory
  Gpt model_;
  AdamW optimizer_;
  BatchSampler sampler_;
  int64_t anywhere_rows_;  // rows of a batch drawn anywhere from data.random_rows_from_step on
  Rng dropout_rng_;
  Rng rank_dropout_rng_;  // with several ranks: seeded per step by dropout_rng_ and the rank
  ForwardOptions forward_options_;
  int64_t step_ = 0, first_step_ = 0;  // steps completed; the step this process started at
  std::optional<double> best_val_;
  std::optional<AppendFile> metrics_;         // rank 0: metrics.jsonl
  std::vector<int32_t> inputs_, targets_;     // [B,T], the global batch
  std::optional<GradientExchange> gradients_;  // with several ranks
  bool stop_after_step_ = false;              // with several ranks: some rank was asked to stop
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
