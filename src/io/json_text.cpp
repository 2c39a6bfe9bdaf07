// One-line descriptions of JSON parse failures and of offending values.
#include "io/json_text.h"

#include <algorithm>

#include "data/json_limits.h"
#include "core/error.h"

namespace mg {

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
