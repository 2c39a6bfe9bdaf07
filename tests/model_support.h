// Small models for the tests (the nn layer).
#pragma once

#include <cstdint>
#include <string>

#include "core/random.h"
#include "nn/gpt.h"
#include "model_spec/model_config.h"

namespace mg::test {

// A model config with docs/config.md's defaults for every key not given.
inline ModelConfig config_of(int64_t n_layer, int64_t n_embd, int64_t n_head, int64_t block_size, int64_t vocab_size,
                             const std::string& position) {
  ModelConfig c;
  c.n_layer = n_layer;
  c.n_embd = n_embd;
  c.n_head = n_head;
  c.block_size = block_size;
  c.vocab_size = vocab_size;
  c.position = parse_position(position).value();
  return c;
}

// A small model (2 heads) with docs/model.md's initialisation drawn from `seed`.
inline Gpt small_model(int64_t n_layer, int64_t n_embd, int64_t block_size, int64_t vocab_size, uint64_t seed,
                       const std::string& position = "rope") {
  Gpt model(config_of(n_layer, n_embd, ModelConfig{}.n_head, block_size, vocab_size, position));
  Rng rng(seed);
  model.initialize(rng);
  return model;
}

}  // namespace mg::test
