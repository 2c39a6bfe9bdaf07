// The explorer's step slider data (report/explorer.h's "replay"; interp/replay.h computes it):
// per kept evaluation, compactly, what the slider redraws on the page's text. By head
// (layer-major, as the page's "heads"):
//   {"positions": [P...], "parts": [{"name", "part", "layer", "head"}] (the attribution's parts,
//    the same at every step), "events": inspect-heads --timeline --format json's events without
//    their chains, "steps": [{"step", "loss", "heads": [{"weights" (as the page's: the lower
//    triangle, 24 bits a weight, base64), "summary"}], "next": [per position: [[symbol,
//    probability, logit] x 10]], "attribution": [per position: [answer, against, difference,
//    [each part's difference]]], "roles": [per head: the pattern scores, as metrics.jsonl's
//    head_roles], "chain": inspect-heads --explain's JSON, or null}]}
// No traces: they are the page's own model's only.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "interp/next_symbol.h"
#include "interp/patterns.h"
#include "interp/replay.h"

namespace mg {

nlohmann::ordered_json explorer_replay_json(const ExplorerReplay& replay, const std::string& run_dir);

// The next-symbol distributions at the positions, compactly: per position [[symbol,
// probability, logit], ...] most likely first (the page's own model's too).
nlohmann::ordered_json next_symbols_compact(const std::vector<NextSymbols>& next);

// A head's summary on the text, as the page's "heads" give it.
nlohmann::ordered_json head_summary_json(const HeadSummary& s);

}  // namespace mg
