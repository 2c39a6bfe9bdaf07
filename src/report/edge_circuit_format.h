// Tables and JSON for inspect-heads --circuit (the edge circuits of interp/circuit_edges.h)
// and --score-split (interp/score_split.h). docs/cli.md lists the JSON keys.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "interp/circuit_edges.h"
#include "interp/score_split.h"

namespace mg {

// "L0.H1 -> L2.H0.k"
std::string edge_name(const EdgeGraph& graph, int64_t edge);

// TOP: how many of each kind's kept edges the table lists, largest own effect first.
std::string format_edge_circuits(const EdgeCircuits& c, int64_t top);
nlohmann::ordered_json edge_circuits_json(const EdgeCircuits& c);

// TOP: how many source pairs each key's row names, largest |part| first.
std::string format_score_split(const ScoreSplit& s, int64_t top);
nlohmann::ordered_json score_split_json(const ScoreSplit& s);

}  // namespace mg
