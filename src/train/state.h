// The training run's parts (train/train.cpp composes them and holds one optimizer step,
// TrainingStep): setup (the corpus, the run directory's resume), evaluation
// (validation loss and probe accuracy, summed over the ranks) and checkpoints (which
// checkpoint is written when). This is what they share: the state
// a training checkpoint carries, from which a resumed run continues bit for bit.
#pragma once

#include <cstdint>
#include <optional>
#include <sstream>
#include <string>

#include "core/random.h"
#include "data/batch_sampler.h"
#include "data/token_ids.h"
#include "io/config.h"
#include "nn/gpt.h"
#include "optim/adamw.h"

namespace mg {

struct TrainingState {
  // A model of CONFIG (vocab_size set), not yet initialised; a zero AdamW state; the batch
  // sampler over TRAIN_IDS and the dropout generator, both seeded by train.seed.
  TrainingState(const Config& config, const TokenIds& train_ids, RowStart row_start)
      : model(config.model),
        optimizer(model.parameters(),
                  {config.train.beta1, config.train.beta2, config.train.eps, config.train.weight_decay}),
        sampler(train_ids, config.model.block_size, config.train.batch_size, config.train.seed, row_start),
        anywhere_rows(row_start.anywhere_rows),
        dropout_rng(config.train.seed ^ 0xd409u) {}
  TrainingState(const TrainingState&) = delete;
  TrainingState& operator=(const TrainingState&) = delete;

  Gpt model;
  AdamW optimizer;
  BatchSampler sampler;  // draws the global batch, on every rank alike
  const int64_t anywhere_rows;  // rows of a batch drawn anywhere from data.random_rows_from_step on
  Rng dropout_rng;
  int64_t step = 0;                // steps completed
  std::optional<double> best_val;  // the lowest validation loss so far
};

// V with 17 significant digits, as a checkpoint's best_val_loss and the run's errors print
// it (read back exactly).
inline std::string format_double(double v) {
  std::ostringstream out;
  out.precision(17);
  out << v;
  return out.str();
}

}  // namespace mg
