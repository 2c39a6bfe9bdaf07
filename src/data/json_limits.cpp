// check_json_limits: one pass over the text, tracking strings and escapes.
#include "data/json_limits.h"

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

}  // namespace mg
