// Small helpers that turn JSON into one-line error text: where a parse failed (line and
// column, not a byte dump), and a short excerpt of a value that was of the wrong kind.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace mg {

// "invalid JSON at line L column C: <reason>" for a parse_error raised on `text`.
std::string describe_json_parse_error(const nlohmann::json::parse_error& error, std::string_view text);

// The value as compact JSON, cut to about max_chars with "..." (strings keep their
// quotes, so `found "abc"` reads as a string); invalid UTF-8 is replaced, never thrown.
std::string json_excerpt(const nlohmann::json& value, size_t max_chars = 40);

}  // namespace mg
