// The serve layer (src/serve/): `mini-gpt serve`, the head explorer live on any text, over
// HTTP on the learner's own machine. It may include report, interp, inference, io and the
// layers below them; never train or cli (scripts/check_layers.py refuses each). Its one
// contact with a training run is run_watch, which only reads the run's metrics.jsonl and
// latest.safetensors.
//
// The model being served: one immutable snapshot (the model, its vocabulary and what is
// computed once per model: the role scores on the probe set, the composition scores),
// replaced whole when the watched run writes a new checkpoint. A request takes the
// current snapshot and computes on it without a lock; a replacement never waits for one.
#pragma once

#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "data/probe.h"
#include "data/vocab.h"
#include "inference/model_store.h"
#include "interp/roles.h"
#include "nn/gpt.h"

namespace mg::serve {

// The probe set every model is scored on (loaded once, at start).
struct ProbeSet {
  std::vector<ProbeItem> items;  // empty: no probe set
  std::string name;              // the file, as inspect-heads names it in "roles_texts"
};

// A text computed on its first request and kept: a slow answer (inspect-heads --circuit
// takes seconds to a minute) that most pages never ask for. A computation that throws is
// tried again on the next request.
class LazyText {
 public:
  const std::string& get(const std::function<std::string()>& make) {
    std::call_once(once_, [&] { text_ = make(); });
    return text_;
  }

 private:
  std::once_flag once_;
  std::string text_;
};

struct ModelSnapshot {
  Gpt model;
  Vocab vocab;
  Config config;
  int64_t step = 0;
  std::string source;     // the checkpoint file it came from
  int64_t generation = 0;  // 1 for the model loaded at start, +1 per reload
  // With a probe set: the roles inspect-heads' default view puts into its JSON (the same
  // for every text) and --roles' JSON (with the ablation columns). Without: none.
  std::optional<RoleReport> pattern_roles;
  std::string roles_json;        // "" without a probe set
  std::string composition_json;  // inspect-heads --composition --format json
  // inspect-heads --circuit --probe FILE --format json, on the first /api/circuit.
  std::vector<ProbeItem> probe_items;  // empty: no probe set
  std::shared_ptr<LazyText> circuit_json = std::make_shared<LazyText>();
};

// Builds the snapshot of LOADED: its roles on PROBES and its composition, computed here.
std::shared_ptr<const ModelSnapshot> make_snapshot(LoadedModel loaded, const ProbeSet& probes, const std::string& source,
                                                   int64_t generation);

class ServedModel {
 public:
  explicit ServedModel(std::shared_ptr<const ModelSnapshot> first) : current_(std::move(first)) {}
  std::shared_ptr<const ModelSnapshot> current() const {
    std::lock_guard lock(mutex_);
    return current_;
  }
  void replace(std::shared_ptr<const ModelSnapshot> next) {
    std::lock_guard lock(mutex_);
    current_ = std::move(next);
  }

 private:
  mutable std::mutex mutex_;
  std::shared_ptr<const ModelSnapshot> current_;
};

}  // namespace mg::serve
