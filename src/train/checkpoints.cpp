// The training run's checkpoint policy (train/checkpoints.h).
#include "train/checkpoints.h"

#include <cmath>

#include "core/error.h"
#include "inference/model_store.h"
#include "io/evaluation_models.h"
#include "kernels/runtime.h"

namespace mg {
CheckpointPolicy::CheckpointPolicy(const Config& config, const Vocab& vocab, std::filesystem::path run_dir, bool writer,
                                   int ranks)
    : config_(config), vocab_(vocab), run_dir_(std::move(run_dir)), writer_(writer), ranks_(ranks) {}

void CheckpointPolicy::keep_if_best(TrainingState& state, double val_loss) const {
  if (state.best_val && !(val_loss < *state.best_val)) return;
  state.best_val = val_loss;
  if (writer_) save(state, "best.safetensors");
}

bool CheckpointPolicy::latest_due(int64_t step) const {
  return step % config_.train.checkpoint_interval == 0 || step == config_.train.max_steps;
}

void CheckpointPolicy::save(const TrainingState& state, const char* name) const {  // rank 0
  refuse_non_finite(state);
  save_model(run_dir_ / name, config_, vocab_, state.step, state.model, &state.optimizer, metadata(state));
}

void CheckpointPolicy::keep_evaluation(const TrainingState& state) const {  // rank 0
  refuse_non_finite(state);
  const std::filesystem::path path = evaluation_model_path(run_dir_, state.step);
  std::error_code ec;
  std::filesystem::create_directories(path.parent_path(), ec);
  if (ec) throw IoError("cannot create " + path.parent_path().string() + ": " + ec.message());
  // The weights alone: what inspect-heads, the slider and the timeline read. The moments
  // (twice the weights) would only serve a resume, which latest.safetensors serves.
  save_model(path, config_, vocab_, state.step, state.model, nullptr, {});
}

void CheckpointPolicy::refuse_non_finite(const TrainingState& state) const {
  for (const auto& p : state.model.parameters().all())
    for (float v : p.var.value().span())
      if (!std::isfinite(v))
        throw Error("parameter " + p.name + " became non-finite at step " + std::to_string(state.step) +
                    "; stopped, the last good checkpoint is " + (run_dir_ / "latest.safetensors").string() +
                    " (try a lower train.lr)");
}

std::map<std::string, std::string> CheckpointPolicy::metadata(const TrainingState& state) const {
  // The sampler draws the global batch on every rank, so its state is the job's and a
  // run resumes from it with any number of ranks.
  std::map<std::string, std::string> extra{
      {"sampler_state", state.sampler.state()},
      {"dropout_rng_state", state.dropout_rng.state_string()},
      {"best_val_loss", state.best_val ? format_double(*state.best_val) : ""},
      {"backend", std::string(backend_name(gemm_backend()))},
  };
  if (ranks_ > 1) extra["ranks"] = std::to_string(ranks_);
  return extra;
}

}  // namespace mg
