// check_json_limits: one pass over the text, tracking strings and escapes; then
// nlohmann parses what passed it.
#include "data/json_limits.h"

#include <algorithm>

#include "core/error.h"

namespace mg {

std::string invalid_json_at(std::string_view text, size_t stop) {
  size_t line = 1, column = 1;
  for (size_t i = 0; i < stop && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return "invalid JSON at line " + std::to_string(line) + " column " + std::to_string(column);
}

void check_json_limits(std::string_view text, const std::string& origin) {
  const std::string prefix = origin.empty() ? "" : origin + ": ";
  size_t depth = 0;
  bool in_string = false, escaped = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\0') throw InputError(prefix + invalid_json_at(text, i) + ": NUL byte");
    if (in_string) {
      if (escaped) escaped = false;
      else if (c == '\\') escaped = true;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxJsonDepth)
        throw InputError(prefix + invalid_json_at(text, i) + ": nested deeper than " + std::to_string(kMaxJsonDepth) +
                         " levels");
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
}

std::string describe_json_parse_error(const nlohmann::json::exception& error, std::string_view text) {
  // nlohmann counts `byte` from 1 at the character where parsing stopped. An overflowing
  // number (out_of_range 406: "number overflow parsing '1e999'") carries no position, so
  // the position is that of the quoted number's first occurrence.
  size_t stop = 0;
  std::string what = error.what();
  if (const auto* parse_error = dynamic_cast<const nlohmann::json::parse_error*>(&error)) {
    stop = parse_error->byte > 0 ? parse_error->byte - 1 : 0;
  } else if (size_t open = what.find('\''), close = what.rfind('\''); open != std::string::npos && close > open) {
    stop = text.find(what.substr(open + 1, close - open - 1));
  }
  // what() reads "[json.exception.parse_error.101] parse error at line 1, column 5: REASON";
  // keep REASON, which nlohmann already writes on one line with control bytes escaped.
  // Other errors read "[json.exception.out_of_range.406] REASON".
  std::string reason;
  if (size_t at = what.find("column "); at != std::string::npos) {
    if (size_t colon = what.find(": ", at); colon != std::string::npos) reason = what.substr(colon + 2);
  } else if (size_t bracket = what.find("] "); bracket != std::string::npos) {
    reason = what.substr(bracket + 2);
  }
  std::string out = invalid_json_at(text, stop);
  if (!reason.empty()) out += ": " + reason;
  std::replace(out.begin(), out.end(), '\n', ' ');
  return out;
}

nlohmann::json parse_json_bounded(std::string_view text) {
  check_json_limits(text);
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {  // syntax, or a number beyond double
    throw InputError(describe_json_parse_error(e, text));
  }
}

std::string json_excerpt(const nlohmann::json& value, size_t max_chars) {
  std::string text = value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  if (text.size() > max_chars) {
    size_t cut = max_chars;  // back off to a UTF-8 character boundary
    while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
    text = text.substr(0, cut) + "...";
  }
  return text;
}

}  // namespace mg
