// The explorer's step slider (inspect-heads --html FILE --run DIR --replay): what one kept
// evaluation's model does on the page's text, the same numbers the page shows for its own
// model, so that moving the slider redraws the page at that evaluation. No traces (they
// would make the page many times larger); the chain only where request/timeline.h finds it.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "data/vocab.h"
#include "interp/attribution.h"
#include "interp/explain.h"
#include "interp/formation.h"
#include "interp/next_symbol.h"
#include "interp/patterns.h"
#include "interp/roles.h"
#include "nn/gpt.h"

namespace mg {

// One kept evaluation's model on the text.
struct ReplayStep {
  int64_t step = 0;
  Inspection inspection;                 // every head's projected_weights [T,T], its summary
  std::vector<NextSymbols> next;         // at each of the replay's positions
  std::vector<Attribution> attribution;  // at each of the replay's positions
  RoleReport roles;                      // the pattern scores (no ablation), as the default view's JSON
  std::optional<Explanation> chain;      // --explain's, at an event's evaluation and the last
};

// A run's kept evaluations on one text, by step, with the run's formation events.
struct ExplorerReplay {
  std::vector<int64_t> positions;  // the query positions each step holds (the page's traced ones)
  std::vector<ReplayStep> steps;
  std::vector<FormationEvent> events;
};

// MODEL on TEXT (WHAT names it in errors): the weights, and the next-symbol distribution and
// the direct logit attribution at each of POSITIONS; roles and chain are left to the caller
// (they read the probe set).
ReplayStep replay_step(const Gpt& model, const Vocab& vocab, std::u32string_view text, const std::string& what,
                       const std::vector<int64_t>& positions);

}  // namespace mg
