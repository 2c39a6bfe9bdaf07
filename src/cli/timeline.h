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

// Whether run_timeline adds the chains: one --explain per kept model an event names, about
// 5 s of one core each for the default model (docs/cli.md), so the end of `train` leaves
// them to inspect-heads --timeline.
enum class TimelineChains { found, left_out };

// RUN_DIR's events; with CHAINS found and a probe set (PROBE, else the kept models'
// data.probe_path when it is there) each event's chains before and after, from --explain on
// the models in RUN_DIR/evals/ (an evaluation without its model has none). InputError when
// RUN_DIR holds no metrics.jsonl.
std::vector<FormationEvent> run_timeline(const std::filesystem::path& run_dir, const std::optional<std::string>& probe,
                                         TimelineChains chains = TimelineChains::found);

}  // namespace mg::cli
