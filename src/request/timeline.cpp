// A run's formation events (request/timeline.h), with the chain --explain finds on the
// models kept at the evaluations around each.
#include "request/timeline.h"

#include <map>
#include <memory>

#include "core/error.h"
#include "inference/model_store.h"
#include "interp/explain.h"
#include "io/evaluation_models.h"
#include "report/run_curves.h"
#include "request/arguments.h"
#include "request/subject.h"

namespace mg {

std::vector<FormationEvent> run_timeline(const std::filesystem::path& run_dir, const std::optional<std::string>& probe,
                                         TimelineChains chains) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(run_dir, ec))
    throw RequestError({ArgumentName{"run"}, " " + run_dir.string() + " is not a run directory (not a folder)"});
  const RunCurves curves = read_run_curves(run_dir);
  const std::vector<EvaluationModel> kept = list_evaluation_models(run_dir);
  // The schedule from the run's config.json; a run without one (or with one this version
  // cannot read) is read without schedule events, from the kept models' config otherwise.
  std::optional<Config> config;
  if (fs::exists(run_dir / "config.json", ec)) config = read_config_file(run_dir / "config.json");
  std::vector<FormationEvent> events =
      find_formation_events(curves.evaluation_records(), config ? run_schedule(*config) : RunSchedule{});
  if (kept.empty() || chains == TimelineChains::left_out) return events;

  // The probe set the chains are found on: --probe, else the models' data.probe_path.
  std::vector<ProbeItem> probes;
  std::map<int64_t, std::unique_ptr<Explanation>> explained;  // by step; null: no model kept
  auto explain_at = [&](int64_t step) -> const Explanation* {
    auto found = explained.find(step);
    if (found != explained.end()) return found->second.get();
    std::unique_ptr<Explanation>& slot = explained[step];
    const fs::path path = evaluation_model_path(run_dir, step);
    if (!fs::exists(path, ec)) return nullptr;
    LoadedModel loaded = load_model(path);
    if (probes.empty()) {
      const std::string probe_path = probe ? *probe : loaded.config.data.probe_path;
      if (probe_path.empty() || (!probe && !fs::exists(probe_path, ec))) return nullptr;
      probes = readable_probe_set(probe_path, loaded.vocab);
    }
    slot = std::make_unique<Explanation>(explain_chains(loaded.model, loaded.vocab, probes));
    return slot.get();
  };
  explain_events(events, explain_at);
  return events;
}

ExplorerReplay explorer_replay(const std::filesystem::path& run_dir, std::u32string_view text,
                               const std::optional<std::string>& probe, const std::vector<int64_t>& positions) {
  namespace fs = std::filesystem;
  std::error_code ec;
  ExplorerReplay replay;
  replay.positions = positions;
  // The events with their chains; each chain is kept at its evaluation's step.
  replay.events = run_timeline(run_dir, probe, TimelineChains::found);
  std::map<int64_t, Explanation> chains;
  for (const FormationEvent& e : replay.events) {
    if (e.chain_before) chains.emplace(e.before_step, *e.chain_before);
    if (e.chain_after) chains.emplace(e.after_step, *e.chain_after);
  }
  const std::vector<EvaluationModel> kept = list_evaluation_models(run_dir);
  std::vector<ProbeItem> probes;
  std::string probe_name;
  for (size_t i = 0; i < kept.size(); ++i) {
    const LoadedModel loaded = load_model(kept[i].path);
    if (i == 0) {  // the probe set as the page's roles read it: --probe, else the config's when it is there
      probe_name = probe ? *probe : loaded.config.data.probe_path;
      if (probe) probes = readable_probe_set(*probe, loaded.vocab);
      else if (!probe_name.empty() && fs::exists(probe_name, ec)) probes = load_probe_set(probe_name);
    }
    ReplayStep step = replay_step(loaded.model, loaded.vocab, text, "text", positions);
    step.step = kept[i].step;
    step.roles = probe_role_report(loaded.model, loaded.vocab, probes, probe_name, text, false, false);
    const auto chain = chains.find(step.step);
    if (chain != chains.end()) step.chain = chain->second;
    else if (i + 1 == kept.size() && !probes.empty()) step.chain = explain_chains(loaded.model, loaded.vocab, probes);
    replay.steps.push_back(std::move(step));
  }
  return replay;
}

}  // namespace mg
