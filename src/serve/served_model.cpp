// The model being served and what is computed once for it (serve/served_model.h).
#include "serve/served_model.h"

#include "core/error.h"
#include "interp/ablation.h"
#include "interp/explain.h"
#include "report/explain_format.h"
#include "report/inspect_json.h"

namespace mg::serve {

std::shared_ptr<const ModelSnapshot> make_snapshot(LoadedModel loaded, const ProbeSet& probes, const std::string& source,
                                                   int64_t generation) {
  auto s = std::make_shared<ModelSnapshot>(std::move(loaded.model), std::move(loaded.vocab), std::move(loaded.config),
                                           loaded.checkpoint.step, source, generation);
  s->probes_ = &probes;
  if (!probes.items.empty()) {
    // As inspect-heads computes them: the default view's roles without the ablation
    // columns, --roles' with them (zero-ablation).
    s->pattern_roles = probe_role_report(s->model, s->vocab, probes.items, probes.name, U"", false, false);
    s->roles_json = roles_json_text(probe_role_report(s->model, s->vocab, probes.items, probes.name, U"", true, false));
  }
  s->composition_json = composition_json_text({s->model, s->vocab});
  return s;
}

std::string ModelSnapshot::explain_json() const {
  std::call_once(explained_, [this] {
    if (!probes_ || probes_->items.empty()) {
      explain_error_ = "no probe set: the chains are found on one (start serve with --probe FILE, or a checkpoint "
                       "whose config names data.probe_path)";
      return;
    }
    try {
      explain_json_ = explanation_json(explain_chains(model, vocab, probes_->items)).dump() + "\n";
    } catch (const InputError& e) {
      explain_error_ = e.what();
    }
  });
  if (!explain_error_.empty()) throw InputError(explain_error_);
  return explain_json_;
}

}  // namespace mg::serve
