// Tables and JSON for inspect-heads' circuit modes: --attribution, --logit-lens,
// --composition and --patch (docs/cli.md lists the JSON keys). Numbers in JSON have 9
// significant digits; tables print what a reader compares at a glance.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "interp/attribution.h"
#include "interp/composition.h"
#include "interp/logit_lens.h"
#include "interp/patching.h"

namespace mg {

std::string format_attribution(const Attribution& a);
nlohmann::ordered_json attribution_json(const Attribution& a);
std::string format_probe_attribution(const ProbeAttribution& a);
nlohmann::ordered_json probe_attribution_json(const ProbeAttribution& a);

std::string format_logit_lens(const LogitLens& lens);
nlohmann::ordered_json logit_lens_json(const LogitLens& lens);

// TOP: how many pairs the table lists, ranked by their largest score over its baseline.
std::string format_composition(const CompositionScores& c, int64_t top);
nlohmann::ordered_json composition_json(const CompositionScores& c);

// TOP: how many rows of the ranked table (heads and stream positions together).
std::string format_patching(const Patching& p, int64_t top);
// One line on why P's shares are not measures, when patching_gap_too_small(P): its gap
// against kMinPatchingGap (the text's "warning:" line, the JSON's "warning", cli's stderr).
std::string patching_gap_warning(const Patching& p);
nlohmann::ordered_json patching_json(const Patching& p);
std::string format_probe_patching(const ProbePatching& p);
nlohmann::ordered_json probe_patching_json(const ProbePatching& p);

}  // namespace mg
