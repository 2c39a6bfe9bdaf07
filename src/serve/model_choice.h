// Which model a request of `serve` asks about (issue 57): run=I, the I-th --run (0-based,
// default the first), and step=N, that run's evaluation model kept at step N (its
// evals/, io/evaluation_models.h; default the model served now, which a watched run
// replaces as it writes latest.safetensors). Every /api/ path reads both, so the page's
// slider moves every view to one evaluation, and each run of `serve --run A --run B`
// has its own page and slider.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "serve/api.h"
#include "serve/run_watch.h"
#include "serve/served_model.h"

namespace mg::serve {

struct ModelChoice {
  std::shared_ptr<const ModelSnapshot> model;
  const ProbeSet* probes = nullptr;
  RunWatch* run = nullptr;  // null without --run
  size_t run_index = 0;
};

// An error in run= or step=: its status (400, or 404 for a step with no kept model) and message.
struct ChoiceRefused {
  int status = 400;
  std::string message;
};

// The choice PARAMS make, with run and step taken out of PARAMS (the modes never see them).
// SERVED and PROBES are what serve serves without --run; RUNS the watched runs, the first
// serving SERVED. Throws ChoiceRefused.
ModelChoice choose_model(QueryParams& params, ServedModel& served, const ProbeSet& probes,
                         const std::vector<RunWatch*>& runs);

// The page `serve --run A --run B` opens with: each run's live page side by side, in a
// frame of its own (/?run=I).
std::string runs_side_by_side_page(const std::vector<RunWatch*>& runs);

}  // namespace mg::serve
