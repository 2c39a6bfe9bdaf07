#include "nn/parameters.h"

#include "core/error.h"

namespace mg {

Var Parameters::add(const std::string& name, Shape shape) {
  MG_CHECK(!contains(name), "parameter registered twice: " + name);
  list_.push_back({name, Var(Tensor::zeros(std::move(shape)), /*requires_grad=*/true)});
  return list_.back().var;
}

const Var& Parameters::get(const std::string& name) const {
  for (const auto& p : list_)
    if (p.name == name) return p.var;
  throw InternalError("no parameter named " + name);
}

Var& Parameters::get(const std::string& name) {
  for (auto& p : list_)
    if (p.name == name) return p.var;
  throw InternalError("no parameter named " + name);
}

bool Parameters::contains(const std::string& name) const {
  for (const auto& p : list_)
    if (p.name == name) return true;
  return false;
}

int64_t Parameters::element_count() const {
  int64_t n = 0;
  for (const auto& p : list_) n += p.var.value().numel();
  return n;
}

void Parameters::zero_grad() {
  for (auto& p : list_) p.var.zero_grad();
}

ModelWeights model_weights(const Parameters& params, const ModelConfig& config) {
  return map_model<Var>(parameter_names(config), [&](const std::string& name) { return params.get(name); });
}

}  // namespace mg
