// Data-parallel training's batch split, fused gradient allreduce and start-up state
// broadcast (see train/data_parallel.h for the arithmetic).
#include "train/data_parallel.h"

#include <chrono>
#include <cstdio>
#include <cstring>

#include "core/error.h"
#include "io/sha256.h"

namespace mg {

namespace {

// Keys that may differ between ranks (see train/data_parallel.h).
bool rank_local_key(const std::string& key) {
  return key == "train.out_dir" || key == "train.threads" || key == "train.backend" || key == "data.path" ||
         key == "data.probe_path";
}

// "N ids, sha256 ..." of up to kSampledIds ids spread evenly over IDS.
std::string sampled_ids(const TokenIds& ids) {
  constexpr int64_t kSampledIds = 4096;
  const int64_t n = ids.size(), count = std::min(n, kSampledIds);
  std::string bytes;
  bytes.reserve(static_cast<size_t>(count) * 4);
  for (int64_t k = 0; k < count; ++k) {
    const int32_t id = ids[k * n / count];
    bytes.append(reinterpret_cast<const char*>(&id), sizeof id);
  }
  return std::to_string(n) + " ids, sha256 " + sha256_hex(bytes).substr(0, 16);
}

}  // namespace

RankSettings rank_settings(const Config& config, const Corpus& corpus, const Parameters& params) {
  RankSettings settings;
  const nlohmann::json resolved = config_to_json(config);  // named: items() would outlive a temporary
  for (const auto& [section, keys] : resolved.items())
    for (const auto& [key, value] : keys.items()) {
      const std::string name = section + "." + key;
      if (!rank_local_key(name)) settings.emplace_back(name, value.dump());
    }
  std::string symbols;
  for (const std::string& s : corpus.vocab.symbols()) symbols += s + '\0';
  settings.emplace_back("vocabulary", std::to_string(corpus.vocab.size()) + " symbols, sha256 " +
                                          sha256_hex(symbols).substr(0, 16));
  settings.emplace_back("corpus", "train " + sampled_ids(corpus.train) + ", validation " + sampled_ids(corpus.val));
  std::string shapes;
  for (const auto& p : params.all()) shapes += p.name + shape_str(p.var.value().shape()) + ' ';
  settings.emplace_back("model parameters", std::to_string(params.all().size()) + " tensors, " +
                                                std::to_string(params.element_count()) + " values, sha256 " +
                                                sha256_hex(shapes).substr(0, 16));
  return settings;
}

void check_ranks_agree(Communicator& communicator, const RankSettings& settings) {
  std::string text;  // "key=value\n" per setting; JSON-dumped values hold no raw newline
  for (const auto& [key, value] : settings) text += key + "=" + value + "\n";
  const std::string digest = sha256_hex(text);
  std::string root_digest = digest;
  communicator.broadcast(root_digest, 0);
  double differing = digest == root_digest ? 0.0 : 1.0;
  communicator.allreduce_sum(&differing, 1);
  if (differing == 0.0) return;

  // Some rank differs: which key, on which rank. Rank 0's settings reach every rank; each
  // rank's first differing index (+1, 0 for none) is summed into its own slot.
  std::string root_text = text;
  communicator.broadcast(root_text, 0);
  RankSettings root;
  for (size_t at = 0; at < root_text.size();) {
    const size_t end = root_text.find('\n', at), equals = root_text.find('=', at);
    root.emplace_back(root_text.substr(at, equals - at), root_text.substr(equals + 1, end - equals - 1));
    at = end + 1;
  }
  size_t first = 0;
  for (size_t i = 0; i < std::max(root.size(), settings.size()); ++i)
    if (i >= root.size() || i >= settings.size() || root[i] != settings[i]) {
      first = i + 1;
      break;
    }
  std::vector<double> firsts(static_cast<size_t>(communicator.size()), 0.0);
  firsts[static_cast<size_t>(communicator.rank())] = static_cast<double>(first);
  communicator.allreduce_sum(firsts.data(), static_cast<int64_t>(firsts.size()));
  int rank = 1;
  while (rank < communicator.size() && firsts[static_cast<size_t>(rank)] == 0.0) ++rank;
  MG_CHECK(rank < communicator.size(), "the settings' digests differ but no rank found a differing key");
  const size_t index = static_cast<size_t>(firsts[static_cast<size_t>(rank)]) - 1;
  std::string value = communicator.rank() == rank && index < settings.size() ? settings[index].second : "(none)";
  communicator.broadcast(value, rank);
  const std::string key = index < root.size() ? root[index].first : settings.at(index).first;
  const std::string root_value = index < root.size() ? root[index].second : "(none)";
  int others = 0;
  for (int r = rank + 1; r < communicator.size(); ++r) others += firsts[static_cast<size_t>(r)] != 0.0;
  throw JobWideInputError("ranks disagree before the first step: " + key + " is " + root_value + " on rank 0 but " + value +
                   " on rank " + std::to_string(rank) +
                   (others ? " (and " + std::to_string(others) + " more rank" + (others > 1 ? "s" : "") + " differ)" : "") +
                   "; every rank must be started with the same config, corpus and seed");
}

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
