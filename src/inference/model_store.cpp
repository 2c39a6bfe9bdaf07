// Checkpoint file <-> live model: load_checkpoint's validated tensors copied into a Gpt,
// and a model (with its AdamW moments) written back under the checkpoint names.
#include "inference/model_store.h"

#include "optim/adamw.h"
#include "core/error.h"

namespace mg {

LoadedModel load_model(const std::filesystem::path& path) {
  Checkpoint checkpoint = load_checkpoint(path);
  // Errors name the file: "CKPT: __metadata__.vocab: entry 3 ..."
  Vocab vocab = Vocab::from_symbols(checkpoint.vocab, path.string() + ": __metadata__.vocab");
  Gpt model(checkpoint.config.model);
  for (auto& [name, var] : model.parameters().all()) {
    auto it = checkpoint.tensors.find(name);
    MG_CHECK(it != checkpoint.tensors.end(), "validated checkpoint lacks " + name);
    var.value().copy_from(it->second);
  }
  Config config = checkpoint.config;
  return LoadedModel{std::move(config), std::move(vocab), std::move(model), std::move(checkpoint)};
}

void save_model(const std::filesystem::path& path, const Config& config, const Vocab& vocab, int64_t step,
                const Gpt& model, const AdamW* optimizer, const std::map<std::string, std::string>& extra) {
  std::vector<std::pair<std::string, const Tensor*>> tensors;
  for (const auto& p : model.parameters().all()) tensors.push_back({p.name, &p.var.value()});
  if (optimizer) {
    for (const AdamWState& s : optimizer->states()) tensors.push_back({kExpAvgPrefix + s.name, &s.exp_avg});
    for (const AdamWState& s : optimizer->states()) tensors.push_back({kExpAvgSqPrefix + s.name, &s.exp_avg_sq});
  }
  save_checkpoint(path, config, vocab.symbols(), step, tensors, extra);
}

bool restore_moments(const Checkpoint& checkpoint, AdamW& optimizer) {
  if (!checkpoint.has_optimizer_state()) return false;
  for (AdamWState& s : optimizer.states()) {
    s.exp_avg.copy_from(checkpoint.tensors.at(kExpAvgPrefix + s.name));
    s.exp_avg_sq.copy_from(checkpoint.tensors.at(kExpAvgSqPrefix + s.name));
  }
  return true;
}

}  // namespace mg
