// The training run's setup (train/train.h): the threads and backend, the corpus and the
// checks of the config against it, and the resume of a run from its checkpoint. The run
// directory itself is chosen and locked by train/run_directory.h.
#pragma once

#include <filesystem>

#include "data/batch_sampler.h"
#include "data/corpus.h"
#include "distributed/communicator.h"
#include "io/config.h"
#include "train/state.h"
#include "train/train.h"

namespace mg {

// The threads and GEMM backend, the checks that need no data, then the corpus, CONFIG's
// vocabulary size from it and the checks against it: all before the model or the run
// directory exists.
Corpus load_training_corpus(Config& config, const TrainRequest& request, const Communicator& comm);

// data.row_start as the validation sampler's RowStart: "story" rows start right after a
// newline.
RowStart resolve_row_start(const DataConfig& data, const Vocab& vocab);

// The training sampler's: VALIDATION's, with data.random_row_fraction of each batch's rows
// drawn anywhere and data.early_story_starts as ids of VOCAB (InputError naming a symbol
// the corpus does not hold).
RowStart training_row_start(RowStart validation, const Config& config, const Vocab& vocab);

// Continues STATE from CHECKPOINT (rank 0): the weights, the AdamW moments and step, the
// sampler and dropout states and the best validation loss, after checking that its model
// config and vocabulary are this run's; then drops the lines of RUN_DIR/metrics.jsonl after
// its step. InputError, naming the file and the key, on anything else.
void resume_training(const std::filesystem::path& checkpoint, const Config& config, const Vocab& vocab,
                     const std::filesystem::path& run_dir, TrainingState& state);

}  // namespace mg
