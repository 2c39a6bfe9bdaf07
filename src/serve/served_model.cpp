// The model being served and what is computed once for it (serve/served_model.h).
#include "serve/served_model.h"

#include "interp/ablation.h"
#include "report/inspect_json.h"

namespace mg::serve {

std::shared_ptr<const ModelSnapshot> make_snapshot(LoadedModel loaded, const ProbeSet& probes, const std::string& source,
                                                   int64_t generation) {
  auto s = std::make_shared<ModelSnapshot>(ModelSnapshot{std::move(loaded.model), std::move(loaded.vocab),
                                                         std::move(loaded.config), loaded.checkpoint.step, source,
                                                         generation, std::nullopt, "", "", {}, std::make_shared<LazyText>()});
  if (!probes.items.empty()) {
    // As inspect-heads computes them: the default view's roles without the ablation
    // columns, --roles' with them (zero-ablation).
    s->pattern_roles = probe_role_report(s->model, s->vocab, probes.items, probes.name, U"", false, false);
    s->roles_json = roles_json_text(probe_role_report(s->model, s->vocab, probes.items, probes.name, U"", true, false));
    s->probe_items = probes.items;
  }
  s->composition_json = composition_json_text({s->model, s->vocab});
  return s;
}

}  // namespace mg::serve
