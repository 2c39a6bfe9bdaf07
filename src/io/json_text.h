// Small helpers that turn JSON into one-line error text: where a parse failed (line and
// column, not a byte dump), and a short excerpt of a value that was of the wrong kind;
// and the one bounded parser every JSON input goes through.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "data/json_limits.h"

namespace mg {

// Parses TEXT as one JSON value. InputError "invalid JSON at line L column C: ..." (no
// origin: callers prefix theirs) for a syntax error, a number beyond double, nesting
// deeper than kMaxJsonDepth (64), or a NUL byte (data/json_limits.h).
nlohmann::json parse_json_bounded(std::string_view text);

// "invalid JSON at line L column C: <reason>" for an error json::parse raised on `text`:
// a parse_error, or the out_of_range of a number too large for a double ("1e999"), which
// callers must catch too (catch nlohmann::json::exception, the base of both).
std::string describe_json_parse_error(const nlohmann::json::exception& error, std::string_view text);

// The value as compact JSON, cut to about max_chars with "..." (strings keep their
// quotes, so `found "abc"` reads as a string); invalid UTF-8 is replaced, never thrown.
std::string json_excerpt(const nlohmann::json& value, size_t max_chars = 40);

}  // namespace mg
