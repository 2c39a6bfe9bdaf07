// The training memory estimate (see memory_budget.h). Per block, with N = B*T rows,
// F = mlp_ratio*D and H heads, the forward keeps about 15 [N,D] tensors (layer norms,
// q/k/v before and after split_heads and RoPE, the attention output before and after
// merge_heads and projection, the residual sums), 2 [N,F] (the MLP's pre- and
// post-GELU values) and 3 [B,H,T,T] (scores, scaled scores, weights); the head adds
// [N,V] logits and their softmax. The backward allocates a gradient of each, hence x2.
#include "io/memory_budget.h"

#include <unistd.h>

#include <cstdio>

#include "core/error.h"

namespace mg {

MemoryEstimate estimate_training_memory(const Config& config) {
  const ModelConfig& m = config.model;
  const double V = static_cast<double>(m.vocab_size), D = static_cast<double>(m.n_embd);
  const double L = static_cast<double>(m.n_layer), T = static_cast<double>(m.block_size);
  const double F = static_cast<double>(m.mlp_ratio) * D, H = static_cast<double>(m.n_head);
  const double B = static_cast<double>(config.train.batch_size), N = B * T;

  // The checkpoint's tensors (docs/checkpoint.md, "Tensor names and shapes"): tok_emb and
  // head [V,D]; pos_emb [T,D] when learned; per block 4 [D,D] projections, 2 LayerNorms (2D each),
  // fc [F,D] + [F], proj [D,F] + [D]; ln_f 2D.
  const double per_block = 4 * D * D + 4 * D + F * D + F + D * F + D;
  double parameters = 2 * V * D + L * per_block + 2 * D;
  if (m.position == PositionType::learned) parameters += T * D;

  const double per_block_activations = 15 * N * D + 2 * N * F + 3 * B * H * T * T;
  const double activations = L * per_block_activations + 2 * N * D + 2 * N * V;

  MemoryEstimate estimate;
  estimate.parameters = parameters;
  estimate.parameter_bytes = 4 * sizeof(float) * parameters;
  estimate.activation_bytes = 2 * sizeof(float) * activations;
  return estimate;
}

uint64_t physical_memory_bytes() {
  const long pages = sysconf(_SC_PHYS_PAGES), page_size = sysconf(_SC_PAGE_SIZE);
  MG_CHECK(pages > 0 && page_size > 0, "sysconf cannot tell the physical memory size");
  return static_cast<uint64_t>(pages) * static_cast<uint64_t>(page_size);
}

std::string format_bytes(double bytes) {
  const char* units[] = {"bytes", "KB", "MB", "GB", "TB", "PB", "EB"};
  int unit = 0;
  while (bytes >= 1024 && unit < 6) {
    bytes /= 1024;
    ++unit;
  }
  char text[64];
  std::snprintf(text, sizeof text, unit == 0 ? "%.0f %s" : "%.1f %s", bytes, units[unit]);
  return text;
}

void check_training_memory(const Config& config, uint64_t available_bytes) {
  const MemoryEstimate e = estimate_training_memory(config);
  if (e.total_bytes() <= static_cast<double>(available_bytes)) return;
  char parameters[32];
  std::snprintf(parameters, sizeof parameters, "%.3g", e.parameters);
  throw InputError("this config needs about " + format_bytes(e.total_bytes()) + " of memory to train (" +
                   parameters + " parameters: " + format_bytes(e.parameter_bytes) +
                   " for weights, gradients and AdamW moments; " + format_bytes(e.activation_bytes) +
                   " of activations for train.batch_size " + std::to_string(config.train.batch_size) +
                   " x model.block_size " + std::to_string(config.model.block_size) + "), but this machine has " +
                   format_bytes(static_cast<double>(available_bytes)) +
                   "; reduce model.n_embd, model.n_layer, train.batch_size or model.block_size");
}

}  // namespace mg
