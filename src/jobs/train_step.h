// One optimizer step of the training run (jobs/train.h): the next global batch, forward
// and backward on this rank's rows, with several ranks the gradients summed over them
// (jobs/data_parallel.h's GradientExchange, the distributed reduction), clipping and
// AdamW.
#pragma once

#include <atomic>
#include <filesystem>
#include <optional>
#include <vector>

#include "core/random.h"
#include "distributed/communicator.h"
#include "io/config.h"
#include "jobs/data_parallel.h"
#include "jobs/train_state.h"
#include "nn/gpt.h"

namespace mg {

class TrainingStep {
 public:
  // SHARE: this rank's rows of every global batch. LAST_GOOD names the checkpoint an error
  // points to. CONFIG, STATE and COMM must outlive the step.
  TrainingStep(const Config& config, TrainingState& state, Communicator& comm, RowShare share,
               std::filesystem::path last_good);

  struct Figures {
    double loss = 0.0;  // the global batch's
    double lr = 0.0;
    double grad_norm = 0.0;  // before clipping
  };
  // Takes step state.step + 1 (and counts it). STOP_REQUESTED (may be null): set when this
  // process is asked to stop; ranks tell each other in the exchange. Error on a non-finite
  // loss.
  Figures take(const std::atomic<bool>* stop_requested);

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

}  // namespace mg
