// inspect-heads --next-symbol's table and JSON (interp/next_symbol.h's NextSymbols); the
// server's /api/next answers with the JSON.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "interp/next_symbol.h"

namespace mg {

// The position and its settings, the 10 most likely symbols with their probability and
// logit, then the answer, its competitor and the logit difference.
std::string format_next_symbols(const NextSymbols& n);

// {"tokens", "position", "temperature", "top_k", "top_p" (only when below 1), "ablate",
// "top": [{"id", "symbol", "probability", "logit"}], "answer": {"id", "symbol", "logit"},
// "against": {...}, "difference"}, numbers to 9 significant digits.
nlohmann::ordered_json next_symbols_json(const NextSymbols& n);

}  // namespace mg
