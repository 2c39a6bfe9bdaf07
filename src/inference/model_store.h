// The inference layer (src/inference/): a model put to use without training it: loaded from
// a checkpoint (model_store), scored (evaluate) and continued (generate). Training,
// interpretation and the command line all stand on it.
// It may include the layers below it: core, model_spec, tensor, kernels, autograd, nn, optim,
// data, io; never train, interp, report or cli (scripts/check_layers.py, and its include root
// build/layers/inference/, refuse them).
//
// Between a checkpoint file and a live model: load a checkpoint (docs/checkpoint.md) into a Gpt
// with its vocabulary and config, or write one. Shared by train, sample, inspect-heads and eval.
#pragma once

#include <filesystem>
#include <map>
#include <string>

#include "data/vocab.h"
#include "io/checkpoint.h"
#include "io/config.h"
#include "nn/gpt.h"

namespace mg {

class AdamW;

struct LoadedModel {
  Config config;
  Vocab vocab;
  Gpt model;
  Checkpoint checkpoint;  // metadata and the optimizer moments, if any
};

// Reads and validates the file, builds the model and copies the weights in.
LoadedModel load_model(const std::filesystem::path& path);

// Writes params (and the optimizer's moments as optim.exp_avg.NAME / optim.exp_avg_sq.NAME
// when optimizer is given) with the documented metadata plus `extra`; atomic (io/checkpoint.h).
void save_model(const std::filesystem::path& path, const Config& config, const Vocab& vocab, int64_t step,
                const Gpt& model, const AdamW* optimizer, const std::map<std::string, std::string>& extra);

// Copies the moments of a training checkpoint into the optimizer's states, by parameter
// name; false when it has none.
bool restore_moments(const Checkpoint& checkpoint, AdamW& optimizer);

}  // namespace mg
