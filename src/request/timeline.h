// A run's formation events with their chains (interp/formation.h): what
// `inspect-heads --timeline --run DIR` prints (its row in request/inspect_modes.cpp) and
// `train` prints at its end. Here because it joins the run directory's files
// (metrics.jsonl, config.json, evals/) to the interpretation that reads them.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "interp/formation.h"
#include "interp/replay.h"

namespace mg {

// Whether run_timeline adds the chains: one --explain per kept model an event names, about
// 5 s of one core each for the default model (docs/cli.md), so the end of `train` leaves
// them to inspect-heads --timeline.
enum class TimelineChains { found, left_out };

// RUN_DIR's events; with CHAINS found and a probe set (PROBE, else the kept models'
// data.probe_path when it is there) each event's chains before and after, from --explain on
// the models in RUN_DIR/evals/ (an evaluation without its model has none). RequestError
// naming "run" when RUN_DIR is no folder; InputError when it holds no metrics.jsonl.
std::vector<FormationEvent> run_timeline(const std::filesystem::path& run_dir, const std::optional<std::string>& probe,
                                         TimelineChains chains = TimelineChains::found);

// The explorer's step slider (inspect-heads --html FILE --run RUN_DIR --replay): each model
// RUN_DIR/evals/ kept on TEXT at POSITIONS (interp/replay.h), its role scores on the probe
// set (PROBE, else the models' data.probe_path when it is there; else on TEXT alone), as the
// default view's --format json gives them, and --explain's chain at the evaluations the
// formation events sit between (run_timeline's) and the last one.
ExplorerReplay explorer_replay(const std::filesystem::path& run_dir, std::u32string_view text,
                               const std::optional<std::string>& probe, const std::vector<int64_t>& positions);

}  // namespace mg
