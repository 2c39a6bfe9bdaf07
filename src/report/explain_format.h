// inspect-heads --explain's table and JSON (interp/explain.h computes the chains).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "interp/explain.h"

namespace mg {

// "L2.H1", as every head is named in inspect-heads' outputs.
std::string chain_head_name(const ChainHead& h);

// One row per kind (accuracy, writer with its attribution and restoration, carrier with its
// restoration and composition against the baseline, the MLPs' part), then one sentence per
// kind telling its chain in words.
std::string format_explanation(const Explanation& e);

// {"kinds": [{"kind", "items", "accuracy", "learned", "difference", "writer", "writer_attribution",
// "writer_restores", "carrier", "carrier_restores", "composition", "composition_score",
// "baseline", "mlp_attribution", "candidates": [...]}], "learned_accuracy", "carrier_restores",
// "skipped": {...}}; heads as "L2.H1", null where none. Numbers rounded as the modes they
// come from round them, so each equals what that mode prints.
nlohmann::ordered_json explanation_json(const Explanation& e);

}  // namespace mg
