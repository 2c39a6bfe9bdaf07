#include "jobs/train.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <sstream>

#include "data/batch_sampler.h"
#include "data/corpus.h"
#include "data/probe.h"
#include "data/text_file.h"
#include "io/atomic_file.h"
#include "io/dir_lock.h"
#include "io/json_text.h"
#include "io/memory_budget.h"
#include "jobs/data_parallel.h"
#include "jobs/evaluate.h"
#include "jobs/head_roles.h"
#include "jobs/model_store.h"
#include "kernels/runtime.h"
#include "optim/adamw.h"
#include "core/error.h"

namespace mg {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// The validation batches are drawn from this seed at every evaluation, so successive
// val losses of a run score the same windows and are comparable.
constexpr uint64_t kValidationSeedOffset = 0x5eed0fe7a1ULL;

// The files a run directory holds. Each is replaced through a hidden temporary beside
// it, ".NAME.tmp.PID" (io/atomic_file.h; ".NAME.tmp" from earlier versions), and
// ".write-test" probes the folder; a SIGKILL or a power cut between such a file's
// creation and its rename or removal leaves it behind. ".lock" (io/dir_lock.h) is the
// run's lock: the kernel releases it when the holder dies, so it is never stale.
constexpr const char* kRunFiles[] = {"latest.safetensors", "best.safetensors", "metrics.jsonl", "config.json"};
constexpr const char* kWriteProbe = ".write-test";

bool is_temporary_file_name(const std::string& name) {
  if (name == kWriteProbe) return true;
  for (const char* run_file : kRunFiles) {
    const std::string prefix = std::string(".") + run_file + ".tmp";
    if (name.rfind(prefix, 0) == 0 && (name.size() == prefix.size() || name[prefix.size()] == '.')) return true;
  }
  return false;
}

// Such leftovers may be cut short at any byte, so they are never loaded; a starting or
// resuming run removes them so that nobody later takes one for a checkpoint. (It holds
// the folder's lock then, so no other run's temporaries can be among them.)
void remove_stale_temporary_files(const fs::path& dir) {
  std::error_code ec;
  std::vector<fs::path> stale;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    if (is_temporary_file_name(it->path().filename().string())) stale.push_back(it->path());
  if (ec) throw IoError("cannot list run directory " + dir.string() + ": " + ec.message());
  for (const auto& path : stale)
    if (!fs::remove(path, ec) && ec)
      throw IoError("cannot remove stale temporary file " + path.string() + ": " + ec.message());
}

// Keeps the lines of metrics.jsonl up to `step`: a run killed after its last checkpoint
// left lines that the resumed run is about to write again (and perhaps a last line cut
// short by the kill, which does not parse and is dropped).
void truncate_metrics(const fs::path& path, int64_t step) {
  std::error_code ec;
  if (!fs::exists(fs::symlink_status(path, ec))) return;
  // Read through RegularFile: a FIFO or device planted as metrics.jsonl is refused, not read.
  RegularFile file(path, "metrics file", std::numeric_limits<uint64_t>::max());
  std::string pending, kept;
  auto keep_if_due = [&](const std::string& line) {
    // Lines are ours, but bounded anyway: a deep line is dropped like a cut one.
    nlohmann::json json;
    try {
      json = parse_json_bounded(line);
    } catch (const InputError&) {
      return;
    }
    if (json.is_object() && json.contains("step") && json["step"].is_number_integer() &&
        json["step"].get<int64_t>() <= step)
      kept += line + "\n";
  };
  std::vector<char> buffer(size_t(1) << 20);
  for (size_t n; (n = file.read_some(buffer.data(), buffer.size())) > 0;) {
    pending.append(buffer.data(), n);
    size_t start = 0;
    for (size_t end; (end = pending.find('\n', start)) != std::string::npos; start = end + 1)
      keep_if_due(pending.substr(start, end - start));
    pending.erase(0, start);
  }
  if (!pending.empty()) keep_if_due(pending);
  write_text_atomically(path, kept);
}

// Fails before training, not at the first checkpoint, when the folder cannot be created
// or written (a path under a regular file, a read-only mount), naming the reason.
void ensure_run_dir(const fs::path& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw IoError("cannot create run directory " + dir.string() + ": " + ec.message());
  const fs::path probe = dir / kWriteProbe;
  ::unlink(probe.c_str());  // a leftover (or anything planted there) is not opened: O_EXCL
  const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0) throw IoError("run directory " + dir.string() + " is not writable: " + std::strerror(errno));
  ::close(fd);
  fs::remove(probe, ec);
}

// A fresh run never overwrites another run's checkpoints, metrics or config.
void refuse_to_overwrite(const fs::path& dir) {
  const fs::path latest = dir / "latest.safetensors";
  for (const char* name : {"latest.safetensors", "best.safetensors", "metrics.jsonl", "config.json"}) {
    if (!fs::exists(dir / name)) continue;
    if (fs::exists(latest))
      throw InputError("run directory " + dir.string() + " already holds a run (" + name +
                       "); continue it with --resume " + latest.string() + " or choose another --out");
    // Killed before its first checkpoint: there is nothing to resume from.
    throw InputError("run directory " + dir.string() + " already holds " + name +
                     " but no latest.safetensors to resume from; remove the folder or choose another --out");
  }
}

// The entries of DIR other than its lock file (none when DIR does not exist).
std::vector<std::string> folder_entries(const fs::path& dir) {
  std::vector<std::string> names;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return names;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    if (it->path().filename() != kLockFileName) names.push_back(it->path().filename().string());
  if (ec) throw IoError("cannot list run directory " + dir.string() + ": " + ec.message());
  return names;
}

// The checkpoint's own folder, the run directory it belongs to.
fs::path folder_of(const fs::path& checkpoint) {
  return checkpoint.has_parent_path() ? checkpoint.parent_path() : fs::path(".");
}

// A resumed run writing outside its checkpoint's folder needs a new or empty one.
void refuse_foreign_folder(const fs::path& dir, const fs::path& checkpoint) {
  const std::vector<std::string> entries = folder_entries(dir);
  if (entries.empty()) return;
  throw InputError("run directory " + dir.string() + " is not the folder of --resume " + checkpoint.string() +
                   " and already holds " + entries.front() + (entries.size() > 1 ? " and more" : "") +
                   "; a resumed run continues in its checkpoint's folder (leave out --out) or in a new or "
                   "empty --out");
}

// Where a run writes, so that no run is ever trained over: a fresh run into out_dir (which
// refuse_to_overwrite then checks); a resumed run into its checkpoint's own folder, or
// into an --out that is new or empty (a branch of the run). Any other folder is refused.
fs::path choose_run_dir(const TrainRequest& request) {
  if (!request.resume) return request.out_dir ? *request.out_dir : fs::path(request.config.train.out_dir);
  const fs::path own = folder_of(*request.resume);
  if (!request.out_dir) return own;
  std::error_code ec;
  if (fs::equivalent(*request.out_dir, own, ec)) return own;
  refuse_foreign_folder(*request.out_dir, *request.resume);
  return *request.out_dir;
}

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

// data.row_start as the samplers' RowStart: "story" rows start right after a newline.
RowStart resolve_row_start(const DataConfig& data, const Vocab& vocab) {
  if (data.row_start != "story") return RowStart::anywhere();
  const auto newline = vocab.find(U'\n');
  if (!newline)
    throw InputError("data.row_start \"story\" needs one story per line, but " + data.path + " has no newline");
  return RowStart::after(*newline);
}

std::string format_double(double v) {
  std::ostringstream out;
  out.precision(17);
  out << v;
  return out.str();
}

}  // namespace

TrainResult train(const TrainRequest& request) {
  Config config = request.config;
  const TrainConfig& tc = config.train;
  SingleProcess alone;
  Communicator& comm = request.communicator ? *request.communicator : alone;
  const bool distributed = comm.size() > 1;
  const bool writer = comm.rank() == 0;  // writes the run directory, reports progress
  // "All cores" for a rank is its share of the machine's cores: ranks on one machine
  // each spinning an OpenMP pool over every core would slow each other down many times.
  int threads = static_cast<int>(tc.threads);
  if (threads == 0 && distributed) threads = std::max(1, hardware_threads() / comm.local_size());
  set_num_threads(threads);
  set_gemm_backend(tc.backend.empty() ? default_gemm_backend() : parse_gemm_backend(tc.backend));

  if (config.data.path.empty())
    throw InputError("data.path is not set: the config must name a corpus file (or pass --set data.path=FILE)");
  if (request.resume && is_temporary_file_name(request.resume->filename().string()))
    throw InputError(request.resume->string() + " is the temporary file of an unfinished checkpoint write, not a " +
                     "checkpoint; resume from latest.safetensors beside it");
  Corpus corpus = load_corpus(config.data.path, config.data.val_fraction, config.model.block_size);
  config.model.vocab_size = corpus.vocab.size();
  check_eval_batches(config, corpus.val.size());
  check_training_memory(config);  // before the model or the run directory exists
  std::vector<ProbeItem> probes;
  if (!config.data.probe_path.empty()) probes = load_probe_set(config.data.probe_path);
  // Every evaluation also scores each head's role on the probe prompts (jobs/head_roles.h),
  // so metrics.jsonl shows when a head became what it is.
  RoleOptions role_options;
  role_options.texts = probe_texts(corpus.vocab, probes, config.model.block_size);
  role_options.texts_description = "the probe prompts";
  role_options.probes = &probes;
  const RowStart row_start = resolve_row_start(config.data, corpus.vocab);

  const RowShare share = batch_rows(tc.batch_size, comm.rank(), comm.size());

  const fs::path run_dir = choose_run_dir(request);
  config.train.out_dir = run_dir.string();  // config.json and the checkpoints say where the run is
  std::optional<DirectoryLock> lock;  // held until train() returns: one writer per run directory
  if (writer) {
    // Checked before the folder is touched, and again under the lock (another process
    // may have started meanwhile).
    auto refuse_others = [&] {
      if (!request.resume) refuse_to_overwrite(run_dir);
      else if (run_dir != folder_of(*request.resume)) refuse_foreign_folder(run_dir, *request.resume);
    };
    refuse_others();
    ensure_run_dir(run_dir);
    lock.emplace(run_dir, "run directory");
    refuse_others();
    remove_stale_temporary_files(run_dir);
  }

  Gpt model(config.model);
  AdamW optimizer(model.parameters(), {tc.beta1, tc.beta2, tc.eps, tc.weight_decay});
  BatchSampler sampler(corpus.train, config.model.block_size, tc.batch_size, tc.seed, row_start);
  Rng dropout_rng(tc.seed ^ 0xd409u);
  int64_t step = 0;
  std::optional<double> best_val;

  if (request.resume && writer) {
    LoadedModel saved = load_model(*request.resume);
    if (config_to_json(saved.config)["model"] != config_to_json(config)["model"])
      throw InputError(request.resume->string() + ": its model config differs from this run's (" +
                       config_to_json(saved.config)["model"].dump() + ")");
    if (saved.vocab.symbols() != corpus.vocab.symbols())
      throw InputError(request.resume->string() + ": its vocabulary differs from the corpus " + config.data.path);
    for (auto& p : model.parameters().all()) p.var.value().copy_from(saved.model.parameters().get(p.name).value());
    if (!restore_moments(saved.checkpoint, optimizer))
      throw InputError(request.resume->string() + ": not a training checkpoint (no optimizer moments)");
    const auto& meta = saved.checkpoint.metadata;
    auto need = [&](const char* key) -> const std::string& {
      auto it = meta.find(key);
      if (it == meta.end()) throw InputError(request.resume->string() + ": metadata lacks \"" + key + "\"");
      return it->second;
    };
    step = saved.checkpoint.step;
    if (tc.max_steps <= step)
      throw InputError(request.resume->string() + " is at step " + std::to_string(step) + " and train.max_steps (--max-steps) is " +
                       std::to_string(tc.max_steps) + ": a resumed run continues up to max_steps, so there is "
                       "nothing to train; pass a --max-steps above " + std::to_string(step));
    optimizer.set_steps_taken(step);
    // The states are checked by their readers; errors gain the file and the key.
    auto restore = [&](const char* key, const auto& apply) {
      try {
        apply(need(key));
      } catch (const InputError& e) {
        throw InputError(request.resume->string() + ": __metadata__." + key + ": " + e.what());
      }
    };
    restore("sampler_state", [&](const std::string& text) { sampler.restore(text); });
    restore("dropout_rng_state", [&](const std::string& text) { dropout_rng.set_state_string(text); });
    if (auto it = meta.find("best_val_loss"); it != meta.end())
      best_val = parse_best_val_loss(it->second, request.resume->string());
    truncate_metrics(run_dir / "metrics.jsonl", step);
  } else if (!request.resume) {
    Rng init_rng(tc.seed);
    model.initialize(init_rng);
    if (writer) write_text_atomically(run_dir / "metrics.jsonl", "");
  }
  if (distributed) {  // every rank continues from rank 0's state, fresh or resumed
    SharedState state{step, sampler.state(), dropout_rng.state_string(), best_val};
    broadcast_training_state(comm, optimizer, state);
    step = state.step;
    sampler.restore(state.sampler_state);
    dropout_rng.set_state_string(state.dropout_rng_state);
    best_val = state.best_val;
  }
  if (writer) write_text_atomically(run_dir / "config.json", config_to_json(config).dump(2) + "\n");

  auto checkpoint_extra = [&]() {
    // The sampler draws the global batch on every rank, so its state is the job's and a
    // run resumes from it with any number of ranks.
    std::map<std::string, std::string> extra{
        {"sampler_state", sampler.state()},
        {"dropout_rng_state", dropout_rng.state_string()},
        {"best_val_loss", best_val ? format_double(*best_val) : ""},
        {"backend", std::string(backend_name(gemm_backend()))},
    };
    if (distributed) extra["ranks"] = std::to_string(comm.size());
    return extra;
  };
  auto save = [&](const char* name) {
    // A step can leave non-finite weights behind a finite loss; such a state is never
    // written over a good checkpoint.
    for (const auto& p : model.parameters().all())
      for (float v : p.var.value().span())
        if (!std::isfinite(v))
          throw Error("parameter " + p.name + " became non-finite at step " + std::to_string(step) +
                      "; stopped, the last good checkpoint is " + (run_dir / "latest.safetensors").string() +
                      " (try a lower train.lr)");
    save_model(run_dir / name, config, corpus.vocab, step, model, &optimizer, checkpoint_extra());
  };

  std::optional<AppendFile> metrics;  // metrics.jsonl, a line per step
  if (writer) metrics.emplace(run_dir / "metrics.jsonl");

  const int64_t B = tc.batch_size, T = config.model.block_size;
  std::vector<int32_t> inputs(static_cast<size_t>(B * T)), targets(inputs.size());  // [B,T], the global batch
  // This rank's rows of it, [rows,T] (all of it for a single process).
  const std::span<const int32_t> rank_inputs(inputs.data() + share.first * T, static_cast<size_t>(share.rows * T));
  const std::span<const int32_t> rank_targets(targets.data() + share.first * T, static_cast<size_t>(share.rows * T));
  std::optional<GradientExchange> gradients;
  if (distributed) gradients.emplace(comm, model.parameters(), static_cast<double>(share.rows) / static_cast<double>(B));
  // With several ranks each draws its own dropout masks for its rows: from a generator
  // seeded per step by the shared one and the rank (dropout then cannot match a single
  // process's masks, which run over the whole batch in one order).
  Rng rank_dropout_rng;
  const auto start = Clock::now();
  const int64_t first_step = step;
  double training_s = 0.0;  // time in training steps only, for tokens/s
  TrainResult result;
  result.run_dir = run_dir;
  ForwardOptions forward_options;
  forward_options.training = true;
  forward_options.dropout_rng = &dropout_rng;

  set_profiling(request.profile);
  profile_pause();  // each step resumes it; evaluations and checkpoints are not charged

  while (step < tc.max_steps) {
    if (!distributed && request.stop_requested && request.stop_requested->load()) {
      result.interrupted = true;
      break;
    }
    // The process's first step creates the GEMM primitives and fills the storage pool:
    // a profile of a longer run leaves it out.
    if (step == first_step + 1 && tc.max_steps - first_step > 1) profile_clear();
    profile_resume();
    const auto step_start = Clock::now();
    const double lr = learning_rate(step, tc.lr, tc.min_lr, tc.warmup_steps, tc.max_steps);
    {
      ProfileScope scope(OpFamily::data);
      sampler.next(inputs, targets);
    }
    model.parameters().zero_grad();
    if (distributed) {
      rank_dropout_rng.seed_with(dropout_rng.next_u64() ^ (0x9e3779b97f4a7c15ULL * (comm.rank() + 1)));
      forward_options.dropout_rng = &rank_dropout_rng;
    }
    Var loss = model.loss(rank_inputs, rank_targets, share.rows, T, forward_options);
    double loss_value = loss.value()[0];
    auto check_finite = [&](double value) {
      if (!std::isfinite(value))
        throw Error("training loss is " + format_double(value) + " at step " + std::to_string(step + 1) +
                    "; stopped, the last good checkpoint is " + (run_dir / "latest.safetensors").string() +
                    " (try a lower train.lr)");
    };
    if (!distributed) check_finite(loss_value);  // (ranks check the global loss, all alike)
    backward(loss);
    loss = Var();
    bool stop_after_step = false;
    if (distributed) {  // the global batch's loss and gradient, on every rank
      const auto reduced =
          gradients->exchange(loss_value, request.stop_requested && request.stop_requested->load());
      loss_value = reduced.loss;
      stop_after_step = reduced.stop_requested;
      check_finite(loss_value);
    }
    double grad_norm = 0.0;
    {
      ProfileScope scope(OpFamily::optimizer);
      grad_norm = clip_grad_norm(model.parameters(), tc.grad_clip);
      optimizer.step(lr);
    }
    ++step;
    training_s += std::chrono::duration<double>(Clock::now() - step_start).count();
    profile_count_step();
    profile_pause();

    TrainProgress progress;
    progress.step = step;
    progress.max_steps = tc.max_steps;
    progress.loss = loss_value;
    progress.lr = lr;
    progress.grad_norm = grad_norm;
    progress.elapsed_s = std::chrono::duration<double>(Clock::now() - start).count();
    progress.tokens_per_s = static_cast<double>((step - first_step) * B * T) / std::max(training_s, 1e-9);

    nlohmann::json head_roles;  // [{layer, head, scores...}] on evaluation steps with a probe
    if (step % tc.eval_interval == 0 || step == tc.max_steps) {
      const uint64_t val_seed = tc.seed + kValidationSeedOffset;
      double val = 0.0;
      ProbeScore probe_score;
      head_roles = nlohmann::json::array();
      if (!distributed) {
        val = sampled_loss(model, corpus.val, B, tc.eval_batches, val_seed, row_start);
        if (!probes.empty()) probe_score = score_probe(model, corpus.vocab, probes);
      } else {  // each rank scores a share of the batches and probes; the sums add up
        const EvalShare eval_share{comm.rank(), comm.size()};
        if (!probes.empty()) probe_score = score_probe(model, corpus.vocab, probes, eval_share);
        // [val loss sum, right answers, right answers per kind]
        std::vector<double> sums{sampled_loss_sum(model, corpus.val, B, tc.eval_batches, val_seed, eval_share,
                                                  row_start),
                                 static_cast<double>(probe_score.correct)};
        for (int64_t c : probe_score.kind_correct) sums.push_back(static_cast<double>(c));
        comm.allreduce_sum(sums.data(), static_cast<int64_t>(sums.size()));
        val = sums[0] / static_cast<double>(tc.eval_batches);
        probe_score.correct = std::llround(sums[1]);
        for (size_t k = 0; k < probe_score.kind_correct.size(); ++k)
          probe_score.kind_correct[k] = std::llround(sums[2 + k]);
      }
      if (!probes.empty()) {
        progress.probe_accuracy = probe_score.accuracy();
        for (size_t k = 0; k < probe_score.kinds.size(); ++k)
          progress.probe_accuracy_by_kind.emplace_back(probe_score.kinds[k], probe_score.kind_accuracy(k));
        result.probe_accuracy_by_kind = progress.probe_accuracy_by_kind;
      }
      progress.val_loss = val;
      result.final_val_loss = val;
      result.probe_accuracy = progress.probe_accuracy;
      // On the writer only: every rank holds the same weights, and only the writer logs.
      if (writer && !probes.empty()) {
        for (const HeadRoleScores& head : score_head_roles(model, corpus.vocab, role_options).heads) {
          nlohmann::json scores = head_roles_json(head);
          // Ablation is inspect-heads' and eval's, not every evaluation's: a probe scoring per head.
          scores.erase("accuracy_drop");
          scores.erase("accuracy_drop_by_kind");
          scores["layer"] = head.layer;
          scores["head"] = head.head;
          head_roles.push_back(std::move(scores));
        }
      }
      if (!best_val || val < *best_val) {
        best_val = val;
        if (writer) save("best.safetensors");
      }
    }
    nlohmann::json line = {{"step", step},         {"lr", lr},
                           {"loss", loss_value},   {"grad_norm", grad_norm},
                           {"tokens_per_s", progress.tokens_per_s}, {"elapsed_s", progress.elapsed_s}};
    if (progress.val_loss) line["val_loss"] = *progress.val_loss;
    if (progress.probe_accuracy) line["probe_accuracy"] = *progress.probe_accuracy;
    if (!progress.probe_accuracy_by_kind.empty()) {
      nlohmann::json by_kind = nlohmann::json::object();
      for (const auto& [kind, accuracy] : progress.probe_accuracy_by_kind) by_kind[kind] = accuracy;
      line["probe_accuracy_by_kind"] = by_kind;
    }
    if (!head_roles.empty()) line["head_roles"] = head_roles;
    if (writer) {
      metrics->append(line.dump() + "\n");
      if (step % tc.checkpoint_interval == 0 || step == tc.max_steps) save("latest.safetensors");
      if (request.on_progress) request.on_progress(progress);
    }
    if (stop_after_step && step < tc.max_steps) {  // seen by every rank at the same step
      result.interrupted = true;
      break;
    }
  }
  if (writer && (result.interrupted || step == first_step)) save("latest.safetensors");

  if (request.profile) result.profile = profile_snapshot();
  set_profiling(false);
  result.tensor_pool = tensor_pool_stats();
  result.step = step;
  result.best_val_loss = best_val;
  result.ranks = comm.size();
  result.allreduce_s = gradients ? gradients->allreduce_seconds() : 0.0;
  result.training_s = training_s;
  result.steps_run = step - first_step;
  result.elapsed_s = std::chrono::duration<double>(Clock::now() - start).count();
  result.tokens_per_s = static_cast<double>((step - first_step) * B * T) / std::max(training_s, 1e-9);
  return result;
}

}  // namespace mg
