// The bounds every JSON text is held to before nlohmann parses it: nesting depth and NUL
// bytes. nlohmann's parser and dump (and so every error excerpt) recurse once per level,
// so a value nested 60,000 deep overflows the stack; and nlohmann takes a NUL for the end
// of the input, accepting `{...}\0garbage`. Here, in the lowest layer that reads JSON (the
// probe set), with the one parser every JSON reader of mini-gpt goes through
// (parse_json_bounded: configs, checkpoints, probe files, run folders' metrics.jsonl).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace mg {

// mini-gpt's own JSON is 2 levels deep.
inline constexpr size_t kMaxJsonDepth = 64;

// Throws InputError "[ORIGIN: ]invalid JSON at line L column C: nested deeper than 64
// levels" (or ": NUL byte") at the first fault; brackets inside strings do not count.
void check_json_limits(std::string_view text, const std::string& origin = "");

// Parses TEXT as one JSON value. InputError "invalid JSON at line L column C: ..." (no
// origin: callers prefix theirs) for a syntax error, a number beyond double, nesting
// deeper than kMaxJsonDepth (64), or a NUL byte.
nlohmann::json parse_json_bounded(std::string_view text);

// "invalid JSON at line L column C: <reason>" for an error json::parse raised on `text`:
// a parse_error, or the out_of_range of a number too large for a double ("1e999"), which
// callers must catch too (catch nlohmann::json::exception, the base of both).
std::string describe_json_parse_error(const nlohmann::json::exception& error, std::string_view text);

// The value as compact JSON, cut to about max_chars with "..." (strings keep their
// quotes, so `found "abc"` reads as a string); invalid UTF-8 is replaced, never thrown.
std::string json_excerpt(const nlohmann::json& value, size_t max_chars = 40);

// "invalid JSON at line L column C" for byte offset STOP of TEXT (lines and columns from 1).
std::string invalid_json_at(std::string_view text, size_t stop);

}  // namespace mg
