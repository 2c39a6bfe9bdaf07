#include "jobs/generate.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "tensor/error.h"

namespace mg {

void validate_sampling(const SamplingSettings& s) {
  if (!(s.temperature >= 0.0) || !std::isfinite(s.temperature))
    throw InputError("--temperature must be >= 0, found " + std::to_string(s.temperature));
  if (s.top_k < 0) throw InputError("--top-k must be >= 0, found " + std::to_string(s.top_k));
  if (!(s.top_p > 0.0 && s.top_p <= 1.0))
    throw InputError("--top-p must be in (0, 1], found " + std::to_string(s.top_p));
}

int32_t choose_symbol(std::span<const float> logits, const SamplingSettings& s, Rng& rng) {
  const int64_t V = static_cast<int64_t>(logits.size());
  if (s.temperature == 0.0)  // the first maximum: ties go to the lowest id
    return static_cast<int32_t>(std::max_element(logits.begin(), logits.end()) - logits.begin());

  // Candidates by descending logit (ties by id, so the order never depends on the sort).
  std::vector<int32_t> order(static_cast<size_t>(V));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) { return logits[a] > logits[b]; });
  int64_t keep = s.top_k > 0 ? std::min<int64_t>(s.top_k, V) : V;

  // Softmax of logits / temperature in double, max-subtracted.
  const double top = logits[order[0]];
  std::vector<double> p(static_cast<size_t>(keep));
  double sum = 0.0;
  for (int64_t i = 0; i < keep; ++i) sum += p[i] = std::exp((logits[order[i]] - top) / s.temperature);
  for (double& x : p) x /= sum;
  if (s.top_p < 1.0) {  // nucleus: the smallest prefix whose mass reaches top_p
    double mass = 0.0;
    int64_t n = 0;
    while (n < keep && mass < s.top_p) mass += p[n++];
    keep = std::max<int64_t>(n, 1);
    sum = mass;
  } else {
    sum = 1.0;
  }
  const double u = rng.uniform() * sum;
  double acc = 0.0;
  for (int64_t i = 0; i < keep; ++i) {
    acc += p[i];
    if (u < acc) return order[i];
  }
  return order[keep - 1];  // u landed in the rounding slack at the end
}

Generator::Generator(Gpt& model, bool use_cache) : model_(model), use_cache_(use_cache) {}

void Generator::start(std::span<const int32_t> prompt) {
  MG_CHECK(!prompt.empty(), "a text starts with at least one symbol");
  const size_t T = static_cast<size_t>(model_.config().block_size);
  const size_t from = prompt.size() > T ? prompt.size() - T : 0;
  window_.assign(prompt.begin() + from, prompt.end());
  recompute_window();
}

void Generator::recompute_window() {
  cache_ = model_.make_cache();
  std::vector<int32_t> ids(window_.begin(), window_.end());
  Tensor all = model_.forward_cached(ids, cache_);  // [n,V]
  const int64_t V = model_.config().vocab_size, n = static_cast<int64_t>(ids.size());
  logits_.assign(all.data() + (n - 1) * V, all.data() + n * V);
}

void Generator::append(int32_t id) {
  const size_t T = static_cast<size_t>(model_.config().block_size);
  window_.push_back(id);
  if (window_.size() > T) {
    window_.pop_front();
    recompute_window();
  } else if (!use_cache_) {
    recompute_window();
  } else {
    Tensor next = model_.forward_cached(std::span<const int32_t>(&window_.back(), 1), cache_);  // [1,V]
    logits_.assign(next.data(), next.data() + next.numel());
  }
}

}  // namespace mg
