// One optimizer step of the training run (jobs/train_step.h).
#include "jobs/train_step.h"

#include <cmath>
#include <span>

#include "core/error.h"
#include "kernels/profile.h"

namespace mg {
TrainingStep::TrainingStep(const Config& config, TrainingState& state, Communicator& comm, RowShare share,
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

TrainingStep::Figures TrainingStep::take(const std::atomic<bool>* stop_requested) {
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

}  // namespace mg
