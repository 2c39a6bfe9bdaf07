// Typed errors' helpers: the internal check, and the text an error is shown as.
#include "core/error.h"

#include <cmath>

namespace mg {
namespace {

// The character of TEXT at byte AT, with its UTF-8 bytes; a byte that starts no valid
// sequence is one "character" of its own, marked invalid.
struct Character {
  std::string_view bytes;
  char32_t code = 0;
  bool valid = false;
};

Character character_at(std::string_view text, size_t at) {
  const auto lead = static_cast<unsigned char>(text[at]);
  const size_t length = lead < 0x80 ? 1 : (lead >> 5) == 0x6 ? 2 : (lead >> 4) == 0xE ? 3 : (lead >> 3) == 0x1E ? 4 : 0;
  char32_t code = length == 1 ? lead : length == 2 ? lead & 0x1F : length == 3 ? lead & 0x0F : lead & 0x07;
  bool valid = length > 0 && at + length <= text.size();
  for (size_t k = 1; valid && k < length; ++k) {
    const auto next = static_cast<unsigned char>(text[at + k]);
    valid = (next & 0xC0) == 0x80;
    code = (code << 6) | (next & 0x3F);
  }
  // Overlong forms, surrogates and code points past U+10FFFF are not UTF-8 either.
  static constexpr char32_t kLeast[] = {0, 0, 0x80, 0x800, 0x10000};
  valid = valid && code >= kLeast[length] && code <= 0x10FFFF && (code < 0xD800 || code > 0xDFFF);
  return {text.substr(at, valid ? length : 1), valid ? code : 0, valid};
}

bool shown_as_question_mark(const Character& c) {
  const char32_t u = c.code;
  return !c.valid || u < 0x20 || (u >= 0x7F && u <= 0x9F) || u == 0x2028 || u == 0x2029 ||
         (u >= 0x202A && u <= 0x202E) || (u >= 0x2066 && u <= 0x2069);
}

}  // namespace

std::string printable_text(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t at = 0; at < text.size();) {
    const Character c = character_at(text, at);
    if (shown_as_question_mark(c)) out += '?';
    else out += c.bytes;
    at += c.bytes.size();
  }
  return out;
}

std::string error_text(std::string_view message) {
  std::string out;
  for (size_t at = 0; at < message.size();) {
    // The next value: from a quote to the next quote (or the end), or a run of characters
    // that are neither spaces nor quotes; a space stands alone.
    const bool quoted = message[at] == '"';
    if (message[at] == ' ') {
      out += ' ';
      ++at;
      continue;
    }
    size_t end = at + (quoted ? 1 : 0), count = 0, cut = std::string_view::npos;
    while (end < message.size() && message[end] != '"' && (quoted || message[end] != ' ')) {
      if (count++ == kMaxShownValue) cut = end;
      end += character_at(message, end).bytes.size();
    }
    const size_t close = quoted && end < message.size() ? end + 1 : end;  // past the closing quote
    if (cut == std::string_view::npos) {
      out += printable_text(message.substr(at, close - at));
    } else {
      out += printable_text(message.substr(at, cut - at));
      out += quoted ? "...\" (" : "... (";
      out += std::to_string(count) + " characters)";
    }
    at = close;
  }
  return out;
}

void require_finite(double value, std::string_view what) {
  if (std::isfinite(value)) return;
  throw Error(std::string(what) + " is " + (std::isnan(value) ? "nan" : value > 0 ? "inf" : "-inf") +
              ": the checkpoint's weights, though finite, overflow float32 in the computation");
}

void check_failed(const char* condition, const std::string& message, const char* file, int line) {
  throw InternalError(std::string("internal check failed at ") + file + ":" + std::to_string(line) +
                      ": " + condition + (message.empty() ? "" : ": " + message));
}

}  // namespace mg
