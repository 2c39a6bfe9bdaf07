// The bounds every JSON text is held to before nlohmann parses it: nesting depth and NUL
// bytes. nlohmann's dump (and so every error excerpt) recurses once per level, so a value
// nested 60,000 deep overflows the stack; and nlohmann takes a NUL for the end of the
// input, accepting `{...}\0garbage`. Here, in the lowest layer that reads JSON (the probe
// set), so that io's parse_json_bounded and data's readers share one rule.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace mg {

// mini-gpt's own JSON is 2 levels deep.
inline constexpr size_t kMaxJsonDepth = 64;

// Throws InputError "[ORIGIN: ]invalid JSON at line L column C: nested deeper than 64
// levels" (or ": NUL byte") at the first fault; brackets inside strings do not count.
void check_json_limits(std::string_view text, const std::string& origin = "");

// "invalid JSON at line L column C" for byte offset STOP of TEXT (lines and columns from 1).
std::string invalid_json_at(std::string_view text, size_t stop);

}  // namespace mg
