// Checkpoint file <-> live model: load_checkpoint's validated tensors copied into a Gpt,
// and a model (with its AdamW moments) written back under the SPEC names.
#include "jobs/model_store.h"

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
  const auto& params = model.parameters().all();
  for (const auto& p : params) tensors.push_back({p.name, &p.var.value()});
  if (optimizer) {
    for (size_t i = 0; i < params.size(); ++i) tensors.push_back({std::string(kExpAvgPrefix) + params[i].name, &optimizer->exp_avg()[i]});
    for (size_t i = 0; i < params.size(); ++i)
      tensors.push_back({std::string(kExpAvgSqPrefix) + params[i].name, &optimizer->exp_avg_sq()[i]});
  }
  save_checkpoint(path, config, vocab.symbols(), step, tensors, extra);
}

bool restore_moments(const Checkpoint& checkpoint, const Gpt& model, AdamW& optimizer) {
  const auto& params = model.parameters().all();
  if (!checkpoint.tensors.count(std::string(kExpAvgPrefix) + params.front().name)) return false;
  for (size_t i = 0; i < params.size(); ++i) {
    optimizer.exp_avg()[i].copy_from(checkpoint.tensors.at(std::string(kExpAvgPrefix) + params[i].name));
    optimizer.exp_avg_sq()[i].copy_from(checkpoint.tensors.at(std::string(kExpAvgSqPrefix) + params[i].name));
  }
  return true;
}

}  // namespace mg
