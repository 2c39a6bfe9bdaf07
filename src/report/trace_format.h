// inspect-heads --trace's printout and JSON of a HeadTrace (interp/trace.h); the JSON also
// goes into the head explorer's page.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "interp/trace.h"

namespace mg {

// The printout: every step with its numbers at 6 decimals, then (when traced) the whole layer
// at the position split into heads and merged back.
std::string format_trace(const HeadTrace& trace);

// The trace as JSON (--trace --format json, and the head explorer's page), every number
// rounded to 9 significant digits, keys in the order of the steps:
//   {"layer", "head", "position", "T", "D", "d", "position_type", "rope_base", "x" [D], "q_raw" [d], "q" [d], "keys" [P+1][d], "values" [P+1][d], "dots" [P+1],
//    "scale", "scores" [P+1], "weights" [T], "forward_weights" [T], "head_output" [d],
//    "contribution" [D], "final_sigma", "logit_push" [V],
//    "top_up" / "top_down" [{"id", "symbol", "logit"}], "tokens" [T],
//    "split_merge" (when traced: --trace): {"H", "d", "q_row" [D], "k_row" [D], "v_row" [D],
//      "heads" [H] {"weights" [P+1], "output" [d]}, "concatenated" [D], "attention_out" [D],
//      "residual_in" [D], "residual_out" [D], "forward_residual_out" [D]}}
// With KEYS_AND_VALUES false (the head explorer's page), "tokens", "keys", "values",
// "logit_push" and "forward_weights" are left out and "weights" holds only keys 0..P: the page stores
// each head's keys and values once (they do not depend on the query) and has the
// forward's weights in its own table.
nlohmann::ordered_json trace_json(const HeadTrace& trace, bool keys_and_values = true);

}  // namespace mg
