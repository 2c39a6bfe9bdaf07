// The mini-gpt checkpoint (docs/checkpoint.md): a safetensors file whose __metadata__ holds
// format "mini-gpt", format_version "1", the resolved config, the vocabulary and the step,
// and whose tensors are exactly the model's parameters (plus, in training checkpoints,
// the AdamW moments "optim.exp_avg.NAME" and "optim.exp_avg_sq.NAME").
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "io/config.h"
#include "tensor/tensor.h"

namespace mg {

inline constexpr const char* kCheckpointFormat = "mini-gpt";
inline constexpr const char* kCheckpointFormatVersion = "1";
inline constexpr const char* kExpAvgPrefix = "optim.exp_avg.";
inline constexpr const char* kExpAvgSqPrefix = "optim.exp_avg_sq.";

struct Checkpoint {
  Config config;
  std::vector<std::string> vocab;  // symbols in id order, one code point each
  int64_t step = 0;
  std::map<std::string, std::string> metadata;  // all of __metadata__, extra keys included
  std::map<std::string, Tensor> tensors;        // parameters and any optimizer moments
  bool has_optimizer_state() const;             // true when the AdamW moments are present
};

// Writes PATH atomically (see write_safetensors). `extra` holds further string metadata
// (RNG state, sampler state, best val loss, ...); its keys must not be the reserved ones
// (format, format_version, config, vocab, step, data_sha256). The tensor names and
// shapes must be what load_checkpoint accepts for this config, else InternalError.
void save_checkpoint(const std::filesystem::path& path, const Config& config,
                     const std::vector<std::string>& vocab, int64_t step,
                     const std::vector<std::pair<std::string, const Tensor*>>& tensors,
                     const std::map<std::string, std::string>& extra = {});

// Reads and checks a checkpoint; the tensor names and shapes are checked against the
// config before any tensor data is read. Every refusal is an InputError "PATH: ...".
// A checkpoint without data_sha256 (the PyTorch reference writes none) is accepted.
Checkpoint load_checkpoint(const std::filesystem::path& path);

// The names and shapes a checkpoint for `model` may hold, checked against `found`:
// every parameter exactly once with its shape, and the AdamW moments for all parameters
// or for none. Throws InputError "ORIGIN: tensor NAME ..." on the first fault.
void check_checkpoint_tensors(const ModelConfig& model, const std::vector<std::pair<std::string, Shape>>& found,
                              const std::string& origin);

}  // namespace mg
