// A run's formation events with their chains (interp/formation.h): what
// `inspect-heads --timeline --run DIR` prints and `train` prints at its end. Here because
// it joins the run directory's files (metrics.jsonl, config.json, evals/) to the
// interpretation that reads them.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "interp/formation.h"

namespace mg::cli {

// RUN_DIR's events; with a probe set (PROBE, else the kept models' data.probe_path when it
// is there) each event's chains before and after, from --explain on the models in
// RUN_DIR/evals/ (an evaluation without its model has none). InputError when RUN_DIR holds
// no metrics.jsonl.
std::vector<FormationEvent> run_timeline(const std::filesystem::path& run_dir, const std::optional<std::string>& probe);

}  // namespace mg::cli
