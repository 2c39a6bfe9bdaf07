#include "inference/generate.h"

#include <algorithm>
#include <bit>
#include <charconv>
#include <cmath>

#include "core/error.h"

namespace mg {
namespace {

// A key that sorts ascending as the float sorts descending: the IEEE bits of a
// non-negative float order like unsigned integers, a negative one's in reverse. -0 counts
// as +0 (they compare equal, so the id decides), and NaN sorts after everything.
uint32_t descending_key(float value) {
  if (std::isnan(value)) return 0xffffffffu;
  const uint32_t bits = std::bit_cast<uint32_t>(value == 0.0f ? 0.0f : value);
  const uint32_t ascending = (bits & 0x80000000u) ? ~bits : (bits | 0x80000000u);
  return ~ascending;
}

// VALUE as given: the shortest text that reads back as the same double ("1.0000001", not
// std::to_string's "1.000000").
std::string shortest(double value) {
  char text[32];
  const auto result = std::to_chars(text, text + sizeof text, value);
  return std::string(text, result.ptr);
}

}  // namespace

void validate_sampling(const SamplingSettings& s) {
  if (!(s.temperature >= 0.0) || !std::isfinite(s.temperature))
    throw ArgumentError("temperature", " must be >= 0, found " + shortest(s.temperature));
  if (s.top_k < 0) throw ArgumentError("top_k", " must be >= 0, found " + std::to_string(s.top_k));
  if (!(s.top_p > 0.0 && s.top_p <= 1.0))
    throw ArgumentError("top_p", " must be in (0, 1], found " + shortest(s.top_p));
}

void sampling_distribution(std::span<const float> logits, const SamplingSettings& s, SamplingDistribution& out) {
  const int64_t V = static_cast<int64_t>(logits.size());
  for (float logit : logits) require_finite(logit, "a next-symbol logit");
  // Candidates by descending logit, ties by id (so the order never depends on the sort):
  // one key per symbol, an order-reversing image of the logit's bits above the id, sorted
  // ascending. Scratch is kept per thread, so a step allocates nothing.
  thread_local std::vector<uint64_t> keys;
  keys.resize(static_cast<size_t>(V));
  out.order.resize(static_cast<size_t>(V));
  for (int64_t v = 0; v < V; ++v) keys[v] = (uint64_t{descending_key(logits[v])} << 32) | static_cast<uint64_t>(v);
  std::sort(keys.begin(), keys.end());
  for (int64_t i = 0; i < V; ++i) out.order[i] = static_cast<int32_t>(keys[i] & 0xffffffffu);
  if (s.temperature == 0.0) {  // all on the arg-max
    out.probability.assign(1, 1.0);
    out.kept = 1;
    out.mass = 1.0;
    return;
  }
  const int64_t keep = s.top_k > 0 ? std::min<int64_t>(s.top_k, V) : V;

  // Softmax of logits / temperature in double, max-subtracted.
  const double top = logits[out.order[0]];
  std::vector<double>& p = out.probability;
  p.resize(static_cast<size_t>(keep));
  double sum = 0.0;
  for (int64_t i = 0; i < keep; ++i) sum += p[i] = std::exp((logits[out.order[i]] - top) / s.temperature);
  for (double& x : p) x /= sum;  // p holds exactly keep entries
  out.kept = keep;
  out.mass = 1.0;
  if (s.top_p < 1.0) {  // nucleus: the smallest prefix whose mass reaches top_p
    double mass = 0.0;
    int64_t n = 0;
    while (n < keep && mass < s.top_p) mass += p[n++];
    out.kept = std::max<int64_t>(n, 1);
    out.mass = mass;
  }
}

int32_t choose_symbol(std::span<const float> logits, const SamplingSettings& s, Rng& rng) {
  if (s.temperature == 0.0) {  // the first maximum: ties go to the lowest id
    for (float logit : logits) require_finite(logit, "a next-symbol logit");
    return static_cast<int32_t>(std::max_element(logits.begin(), logits.end()) - logits.begin());
  }
  thread_local SamplingDistribution d;
  sampling_distribution(logits, s, d);
  // A draw u in [0, mass): the nucleus is renormalised by scaling u, not the probabilities.
  const double u = rng.uniform() * d.mass;
  double acc = 0.0;
  for (int64_t i = 0; i < d.kept; ++i) {
    acc += d.probability[static_cast<size_t>(i)];
    if (u < acc) return d.order[static_cast<size_t>(i)];
  }
  return d.order[static_cast<size_t>(d.kept - 1)];  // u landed in the rounding slack at the end
}

std::string_view generation_mode_name(GenerationMode mode) {
  static constexpr std::string_view names[] = {"window", "context-shift", "no-cache"};  // in enum order
  return names[static_cast<int>(mode)];
}

Generator::Generator(const Gpt& model, GenerationMode mode) : model_(model), mode_(mode), decoder_(model) {
  if (mode_ == GenerationMode::context_shift && model_.config().position != PositionType::rope)
    throw ArgumentError("context_shift", " needs a model with RoPE positions; this one has model.position \"" +
                        std::string(position_name(model_.config().position)) + "\"");
  window_.reserve(static_cast<size_t>(model_.config().block_size) + 1);
}

void Generator::start(std::span<const int32_t> prompt) {
  MG_CHECK(!prompt.empty(), "a text starts with at least one symbol");
  const size_t T = static_cast<size_t>(model_.config().block_size);
  const size_t from = prompt.size() > T ? prompt.size() - T : 0;
  window_.assign(prompt.begin() + from, prompt.end());
  recompute_window();
}

void Generator::recompute_window() {
  if (mode_ != GenerationMode::no_cache) {
    decoder_.reset();
    current_ = decoder_.append(window_);
    return;
  }
  NoGradGuard no_grad;
  const int64_t V = model_.config().vocab_size, n = static_cast<int64_t>(window_.size());
  Tensor all = model_.forward(window_, 1, n).value();  // [1,n,V]
  logits_.assign(all.data() + (n - 1) * V, all.data() + n * V);
  current_ = logits_;
}

void Generator::append(int32_t id) {
  const int64_t T = model_.config().block_size;
  if (mode_ == GenerationMode::context_shift) {  // window_ is not kept: the cache is the context
    // llama.cpp's choice: half the cache at a time, so a shift comes every T/2 symbols.
    if (decoder_.length() == T) decoder_.drop_oldest(std::max<int64_t>(T / 2, 1));
    current_ = decoder_.append(std::span<const int32_t>(&id, 1));
    return;
  }
  window_.push_back(id);
  if (static_cast<int64_t>(window_.size()) > T) {
    window_.erase(window_.begin());  // a shift of block_size ids, no allocation
    recompute_window();
  } else if (mode_ == GenerationMode::no_cache) {
    recompute_window();
  } else {
    current_ = decoder_.append(std::span<const int32_t>(&window_.back(), 1));
  }
}

}  // namespace mg
