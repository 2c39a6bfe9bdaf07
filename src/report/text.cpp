// The writers' shared helpers (report/text.h).
#include "report/text.h"

#include <cstdarg>
#include <cstdio>
#include <cstdlib>

#include "data/utf8.h"

namespace mg {

std::string format(const char* fmt, ...) {
  char buffer[512];
  va_list args;
  va_start(args, fmt);
  std::vsnprintf(buffer, sizeof buffer, fmt, args);
  va_end(args);
  return buffer;
}

double round9(double v) { return std::strtod(format("%.9g", v).c_str(), nullptr); }

std::string xml_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default: out += c;
    }
  }
  return out;
}

int display_width(char32_t c) {
  if (c < 0x20 || (c >= 0x7F && c < 0xA0)) return 0;
  if ((c >= 0x0300 && c <= 0x036F) || (c >= 0x1AB0 && c <= 0x1AFF) || (c >= 0x1DC0 && c <= 0x1DFF) ||
      (c >= 0x20D0 && c <= 0x20FF) || (c >= 0xFE00 && c <= 0xFE0F) || (c >= 0xFE20 && c <= 0xFE2F) || c == 0x200B)
    return 0;  // combining marks and zero-width characters
  if ((c >= 0x1100 && c <= 0x115F) || (c >= 0x2E80 && c <= 0x303E) || (c >= 0x3041 && c <= 0x33FF) ||
      (c >= 0x3400 && c <= 0x4DBF) || (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0xA000 && c <= 0xA4CF) ||
      (c >= 0xAC00 && c <= 0xD7A3) || (c >= 0xF900 && c <= 0xFAFF) || (c >= 0xFE30 && c <= 0xFE4F) ||
      (c >= 0xFF00 && c <= 0xFF60) || (c >= 0xFFE0 && c <= 0xFFE6) || (c >= 0x1F300 && c <= 0x1F64F) ||
      (c >= 0x1F900 && c <= 0x1F9FF) || (c >= 0x20000 && c <= 0x3FFFD))
    return 2;
  return 1;
}

int display_width(std::string_view utf8) {
  int width = 0;
  for (char32_t c : decode_utf8(utf8, "label")) width += display_width(c);
  return width;
}

std::string symbol_label(const std::string& utf8_symbol) {
  if (utf8_symbol == "\n") return "\\n";
  if (utf8_symbol == "\t") return "\\t";
  if (utf8_symbol == "\r") return "\\r";
  if (utf8_symbol == " ") return "\u2423";  // ␣
  const std::u32string cps = decode_utf8(utf8_symbol, "symbol");
  if (cps.size() == 1 && display_width(cps[0]) == 0) return code_point_label(cps[0]);
  return utf8_symbol;
}

std::string head_name(int64_t layer, int64_t head) { return "L" + std::to_string(layer) + ".H" + std::to_string(head); }

}  // namespace mg
