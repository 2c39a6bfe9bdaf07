// The formation events' text and JSON (inspect-heads --timeline, the end of `train`, the
// marks on serve's slider; interp/formation.h finds them). Every sentence of the text is
// made by one function here from the event's fields, so a translation table (issue 56)
// has one place to look.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "interp/formation.h"

namespace mg {

// "accuracy", "role_jump", "loss_bump", "loss_plateau", "schedule".
const char* formation_type_name(FormationType type);

// One line saying what happened, e.g. "who crossed 0.50 (0.420 -> 0.610)" or "block 0's
// queries and keys are let go (train.freeze_block0_qk_to_step)".
std::string formation_headline(const FormationEvent& e);

// A block per event: its step and headline, the heads that changed most, and with chains
// the writer and carrier of each kind (of the event's kind only, for an accuracy event)
// before and after. RUN_DIR is named in the title; "no events" when there are none.
std::string format_formation_events(const std::vector<FormationEvent>& events, const std::string& run_dir);

// {"run": RUN_DIR, "events": [{"type", "step", "before_step", "after_step", "subject",
// "before", "after", "level", "rising", "headline", "heads": [{"head": "L3.H1", "score",
// "before", "after", "role_before", "role_after"}], "chain_before", "chain_after"}]}, the
// chains as explanation_json (report/explain_format.h) or null; before_step and after_step
// null where there is no such evaluation.
nlohmann::ordered_json formation_events_json(const std::vector<FormationEvent>& events, const std::string& run_dir);

}  // namespace mg
