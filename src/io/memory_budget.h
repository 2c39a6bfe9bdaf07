// Refusing a config whose training would not fit in the machine's memory, before anything
// is allocated. The estimate counts float32 weights, their gradients and both AdamW
// moments (4 floats per parameter) plus the activations the autograd graph keeps for one
// step of batch_size x block_size, doubled for their gradients in the backward.
#pragma once

#include <cstdint>
#include <string>

#include "io/config.h"

namespace mg {

struct MemoryEstimate {
  double parameters = 0;        // weights in the model (a count, in double: a bad config overflows int64)
  double parameter_bytes = 0;   // weights + gradients + exp_avg + exp_avg_sq
  double activation_bytes = 0;  // saved forward values and their gradients for one step
  double total_bytes() const { return parameter_bytes + activation_bytes; }
};

// Arithmetic only: nothing proportional to the config's sizes is allocated.
MemoryEstimate estimate_training_memory(const Config& config);

// The machine's physical memory: sysconf(_SC_PHYS_PAGES) * sysconf(_SC_PAGE_SIZE).
uint64_t physical_memory_bytes();

// InputError (exit 2), one line with both figures, when the estimate exceeds
// available_bytes. Call after model.vocab_size is known and before the model is built.
void check_training_memory(const Config& config, uint64_t available_bytes = physical_memory_bytes());

// "1.5 GB", "512.0 MB": how the figures read in messages.
std::string format_bytes(double bytes);

}  // namespace mg
