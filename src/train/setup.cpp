// The training run's setup and resume (train/setup.h).
#include "train/setup.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>

#include "core/error.h"
#include "data/json_limits.h"
#include "data/utf8.h"
#include "inference/model_store.h"
#include "io/atomic_file.h"
#include "io/memory_budget.h"
#include "kernels/runtime.h"
#include "train/run_directory.h"

namespace mg {
namespace {

namespace fs = std::filesystem;

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

}  // namespace

Corpus load_training_corpus(Config& config, const TrainRequest& request, const Communicator& comm) {
  // "All cores" for a rank is its share of the machine's cores: ranks on one machine
  // each spinning an OpenMP pool over every core would slow each other down many times.
  int threads = static_cast<int>(config.train.threads);
  if (threads == 0 && comm.size() > 1) threads = std::max(1, default_num_threads() / comm.local_size());
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

RowStart resolve_row_start(const DataConfig& data, const Vocab& vocab) {
  if (data.row_start != "story") return RowStart::anywhere();
  const auto newline = vocab.find(U'\n');
  if (!newline)
    throw InputError("data.row_start \"story\" needs one story per line, but " + data.path + " has no newline");
  return RowStart::after(*newline);
}

RowStart training_row_start(RowStart validation, const Config& config, const Vocab& vocab) {
  if (validation.after_id < 0) return validation;
  validation.anywhere_rows =
      std::llround(config.data.random_row_fraction * static_cast<double>(config.train.batch_size));
  for (char32_t symbol : decode_utf8(config.data.early_story_starts, "data.early_story_starts")) {
    const auto id = vocab.find(symbol);
    if (!id)
      throw InputError("data.early_story_starts holds " + code_point_label(symbol) + ", which the corpus " +
                       config.data.path + " does not");
    validation.early_first_ids.push_back(*id);
  }
  return validation;
}

void resume_training(const fs::path& checkpoint, const Config& config, const Vocab& vocab, const fs::path& run_dir,
                     TrainingState& state) {
  const std::string origin = checkpoint.string();
  LoadedModel saved = load_model(checkpoint);
  if (config_to_json(saved.config)["model"] != config_to_json(config)["model"])
    throw InputError(origin + ": its model config differs from this run's (" +
                     config_to_json(saved.config)["model"].dump() + ")");
  if (saved.vocab.symbols() != vocab.symbols())
    throw InputError(origin + ": its vocabulary differs from the corpus " + config.data.path);
  for (auto& p : state.model.parameters().all()) p.var.value().copy_from(saved.model.parameters().get(p.name).value());
  if (!restore_moments(saved.checkpoint, state.optimizer))
    throw InputError(origin + ": not a training checkpoint (no optimizer moments)");
  const auto& meta = saved.checkpoint.metadata;
  state.step = saved.checkpoint.step;
  const int64_t max_steps = config.train.max_steps;
  if (state.step >= kMaxStepCount)  // no --max-steps the option takes is above it
    throw InputError(origin + " is at step " + std::to_string(state.step) + ", not below the largest train.max_steps (" +
                     std::to_string(kMaxStepCount) + "): there is no step left to train to");
  if (max_steps <= state.step)
    throw InputError(origin + " is at step " + std::to_string(state.step) + " and train.max_steps (--max-steps) is " +
                     std::to_string(max_steps) + ": a resumed run continues up to max_steps, so there is "
                     "nothing to train; pass a --max-steps above " + std::to_string(state.step));
  state.optimizer.set_steps_taken(state.step);
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
  restore("sampler_state", [&](const std::string& text) { state.sampler.restore(text); });
  restore("dropout_rng_state", [&](const std::string& text) { state.dropout_rng.set_state_string(text); });
  if (auto it = meta.find("best_val_loss"); it != meta.end()) state.best_val = parse_best_val_loss(it->second, origin);
  truncate_metrics(run_dir / "metrics.jsonl", state.step);
  remove_later_evaluation_models(run_dir, state.step);
}

}  // namespace mg
