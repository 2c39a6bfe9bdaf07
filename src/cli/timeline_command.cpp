// inspect-heads --timeline --run DIR (cli/timeline.h): the run's formation events, with the
// chain --explain finds on the models kept at the evaluations around each.
#include <map>
#include <memory>

#include "cli/inspect_heads.h"
#include "cli/timeline.h"
#include "core/error.h"
#include "inference/model_store.h"
#include "interp/explain.h"
#include "io/evaluation_models.h"
#include "report/formation_format.h"
#include "report/run_curves.h"

namespace mg::cli {

std::vector<FormationEvent> run_timeline(const std::filesystem::path& run_dir, const std::optional<std::string>& probe,
                                         TimelineChains chains) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(run_dir, ec)) throw InputError("--run " + run_dir.string() + " is not a run directory (not a folder)");
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

void timeline_mode(const InspectHeadsOptions& o) {
  if (!o.run) throw InputError("--timeline needs --run DIR, a run directory");
  const std::vector<FormationEvent> events = run_timeline(*o.run, o.probe);
  print(o.format == "json" ? formation_events_json(events, *o.run).dump() + "\n"
                           : format_formation_events(events, *o.run));
}

}  // namespace mg::cli
