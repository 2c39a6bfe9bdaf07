// The report layer (src/report/): every writer of text, JSON, SVG and HTML. X_format holds
// technique X's table and JSON (interp/X.h's struct in, a string or JSON value out), X_svg
// its picture, explorer the head explorer's data and page (the page's HTML, CSS and
// JavaScript in explorer/), and this file the helpers they share. Writers return what they
// build; cli prints it or writes it.
// It may include interp, inference, io and the layers below them; never train or cli.
//
// The helpers every writer of inspect-heads' texts shares: printf into a string, numbers
// rounded for JSON, XML escaping for the SVGs and pages, a symbol's terminal width (tables
// align by display width, so a CJK symbol, which a terminal draws two columns wide, lines up
// with ASCII) and its printable label.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace mg {

// printf into a std::string (up to 511 bytes): the one formatter of inspect-heads' texts.
std::string format(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

// V rounded to 9 significant digits: every float survives the trip back, and the JSON stays short.
double round9(double v);

// S with & < > " ' written as XML entities: text and attribute values of the SVGs.
std::string xml_escape(const std::string& s);

// Columns a terminal gives the code point: 2 for East Asian wide and full-width ones
// (CJK ideographs, kana, Hangul, CJK punctuation U+3000-303F such as 。, full-width forms
// U+FF01-FF60 and U+FFE0-FFE6 such as ？), 0 for combining marks, else 1.
int display_width(char32_t code_point);
int display_width(std::string_view utf8);

// How a symbol is shown as a label: a newline as "\n", a tab as "\t", a space as "␣",
// another control character as its U+XXXX name; anything else as itself.
std::string symbol_label(const std::string& utf8_symbol);

// A head's one name in every text, JSON and page: "L3.H1" for layer 3, head 1 (both counted
// from 0; docs/glossary.md glosses it as 第3层·头1). --trace, --ablate and the pages accept it,
// and the older "3.1" too.
std::string head_name(int64_t layer, int64_t head);

}  // namespace mg
