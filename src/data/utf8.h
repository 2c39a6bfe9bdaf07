// UTF-8 <-> Unicode code points (SPEC section 3: a corpus's symbols are code points, not
// bytes). The decoder is strict, as RFC 3629 asks: overlong forms, UTF-16 surrogates,
// values above U+10FFFF, stray continuation bytes and truncated sequences are all errors,
// so every text has exactly one decoding and a vocabulary never holds a malformed symbol.
#pragma once

#include <string>
#include <string_view>

namespace mg {

// Decodes BYTES; InputError "SOURCE: invalid UTF-8 at byte offset N (reason)", where N is
// the 0-based offset of the first byte of the offending sequence.
std::u32string decode_utf8(std::string_view bytes, const std::string& source);

// Encodes one code point (a Unicode scalar value: <= U+10FFFF, not a surrogate).
std::string encode_utf8(char32_t code_point);
std::string encode_utf8(std::u32string_view text);

// "U+4E01": how error messages name a symbol, whether or not it is printable.
std::string code_point_label(char32_t code_point);

}  // namespace mg
