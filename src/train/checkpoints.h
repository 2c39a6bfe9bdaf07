// The training run's checkpoint policy (train/train.h): best.safetensors whenever the
// validation loss improves; latest.safetensors every train.checkpoint_interval steps, at
// max_steps, and when a stop request ends the run (then exit 130 or 143,
// cli/train_command.cpp); evals/step_NNNNNNN.safetensors, the weights alone, at every
// evaluation (io/evaluation_models.h). Only the writer (rank 0) writes; every rank keeps the best loss.
#pragma once

#include <filesystem>
#include <map>
#include <string>

#include "data/vocab.h"
#include "io/config.h"
#include "train/state.h"

namespace mg {

class CheckpointPolicy {
 public:
  // CONFIG and VOCAB are the run's (they go into every checkpoint) and must outlive it.
  CheckpointPolicy(const Config& config, const Vocab& vocab, std::filesystem::path run_dir, bool writer,
                   int ranks);

  // After an evaluation: VAL_LOSS becomes STATE's best, and best.safetensors, when lower.
  void keep_if_best(TrainingState& state, double val_loss) const;
  // Whether latest.safetensors is written after STEP.
  bool latest_due(int64_t step) const;
  // Writes RUN_DIR/NAME (rank 0). Error, naming the last good checkpoint, when a step left
  // non-finite weights behind a finite loss: such a state is never written over a good one.
  void save(const TrainingState& state, const char* name) const;
  // After an evaluation: RUN_DIR/evals/step_NNNNNNN.safetensors, STATE's weights without
  // the moments, atomically as every checkpoint (rank 0). The same refusal as save.
  void keep_evaluation(const TrainingState& state) const;

 private:
  std::map<std::string, std::string> metadata(const TrainingState& state) const;
  void refuse_non_finite(const TrainingState& state) const;

  const Config& config_;
  const Vocab& vocab_;
  std::filesystem::path run_dir_;
  bool writer_;
  int ranks_;
};

}  // namespace mg
