// The model being served and what is computed once for it (serve/served_model.h).
#include "serve/served_model.h"

#include "request/subject.h"

namespace mg::serve {

std::shared_ptr<const ModelSnapshot> make_snapshot(LoadedModel loaded, const ProbeSet& probes, const std::string& source,
                                                   int64_t generation) {
  auto s = std::make_shared<ModelSnapshot>(ModelSnapshot{std::move(loaded.model), std::move(loaded.vocab),
                                                         std::move(loaded.config), loaded.checkpoint.step, source,
                                                         generation, SubjectCache{}});
  s->cache = cache_for(s->model, s->vocab, probes.items, probes.name);
  return s;
}

}  // namespace mg::serve
