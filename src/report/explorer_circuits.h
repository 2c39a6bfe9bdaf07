// The head explorer's circuit section (report/explorer.h): per-head direct logit attribution at
// the traced positions, the patching sweep of the page's question against a corrupted
// partner (when the question is a probe item with a source), and the composition scores
// for the circuit graph. The same functions as inspect-heads --attribution, --patch and
// --composition compute them, so the page and the JSON agree.
#pragma once

#include <cstdint>
#include <vector>

#include <nlohmann/json.hpp>

#include "data/probe.h"
#include "data/vocab.h"
#include "nn/gpt.h"

namespace mg {

// {"attribution": {"positions", "at": {"P": {"answer", "against", "difference",
//   "parts": [{"name", "layer", "head", "difference"}]}}},
//  "patching": {"available", "reason" | "corrupt", "answer", "against", "clean",
//   "corrupt_difference", "heads" [L][H], "streams" [L][T]},
//  "composition": {"baseline": {"q", "k", "v"}, "pairs": [{"writer", "reader", "q", "k", "v"}]},
//  "chain": inspect-heads --explain's JSON on the probe set, or null without one,
//  "edge_circuit": inspect-heads --circuit's JSON on the probe set, or null without one}
nlohmann::ordered_json circuit_explorer_json(const Gpt& model, const Vocab& vocab, const std::vector<int32_t>& ids,
                                             const std::vector<ProbeItem>* probes,
                                             const std::vector<int64_t>& positions);

}  // namespace mg
