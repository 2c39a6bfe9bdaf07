// Data-parallel training's batch split, fused gradient allreduce and start-up state
// broadcast (see data_parallel.h for the arithmetic).
#include "jobs/data_parallel.h"

#include <chrono>
#include <cstdio>
#include <cstring>

#include "core/error.h"

namespace mg {

RowShare batch_rows(int64_t batch_size, int rank, int size) {
  if (batch_size < size)
    throw InputError("train.batch_size " + std::to_string(batch_size) + " is smaller than the job's " +
                     std::to_string(size) + " ranks: each rank trains on at least one row of the global batch");
  const int64_t first = batch_size * rank / size, end = batch_size * (rank + 1) / size;
  return {first, end - first};
}

GradientExchange::GradientExchange(Communicator& communicator, Parameters& params, double weight)
    : communicator_(communicator), params_(params), weight_(static_cast<float>(weight)) {
  buffer_.resize(static_cast<size_t>(params.element_count()) + 2);
}

GradientExchange::Result GradientExchange::exchange(double local_loss, bool local_stop) {
  // grad() materialises a gradient no op reached as zeros, so every rank packs and
  // unpacks the same layout whatever its graph touched.
  float* out = buffer_.data();
  for (auto& p : params_.all()) {
    const Tensor& g = p.var.grad();
    const float* dw = g.data();
    for (int64_t i = 0, n = g.numel(); i < n; ++i) out[i] = weight_ * dw[i];
    out += g.numel();
  }
  out[0] = weight_ * static_cast<float>(local_loss);
  out[1] = local_stop ? 1.0f : 0.0f;

  const auto start = std::chrono::steady_clock::now();
  communicator_.allreduce_sum(buffer_.data(), static_cast<int64_t>(buffer_.size()));
  allreduce_s_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  const float* in = buffer_.data();
  for (auto& p : params_.all()) {
    Tensor& g = p.var.grad();
    std::memcpy(g.data(), in, sizeof(float) * static_cast<size_t>(g.numel()));
    in += g.numel();
  }
  return {static_cast<double>(in[0]), in[1] > 0.0f};
}

void broadcast_training_state(Communicator& communicator, AdamW& optimizer, SharedState& state) {
  size_t elements = 0;  // [weights | exp_avg | exp_avg_sq] of each parameter, in the optimizer's order
  for (const AdamWState& s : optimizer.states()) elements += 3 * static_cast<size_t>(s.exp_avg.numel());
  std::vector<float> buffer(elements);
  auto walk = [&](bool pack) {
    float* cursor = buffer.data();
    for (AdamWState& s : optimizer.states())
      for (Tensor* t : {&s.param.value(), &s.exp_avg, &s.exp_avg_sq}) {
        const size_t bytes = sizeof(float) * static_cast<size_t>(t->numel());
        if (pack) std::memcpy(cursor, t->data(), bytes);
        else std::memcpy(t->data(), cursor, bytes);
        cursor += t->numel();
      }
  };
  walk(true);
  communicator.broadcast(buffer.data(), static_cast<int64_t>(buffer.size()), 0);
  walk(false);

  std::string step = std::to_string(state.step);
  std::string best;  // "" for none; %.17g keeps the double exact through text
  if (state.best_val) {
    char text[32];
    std::snprintf(text, sizeof text, "%.17g", *state.best_val);
    best = text;
  }
  for (std::string* text : {&step, &state.sampler_state, &state.dropout_rng_state, &best})
    communicator.broadcast(*text, 0);
  state.step = std::stoll(step);
  state.best_val = best.empty() ? std::nullopt : std::optional<double>(std::stod(best));
  optimizer.set_steps_taken(state.step);
}

}  // namespace mg
