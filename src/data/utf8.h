// UTF-8 <-> Unicode code points (docs/data.md, "Symbols are Unicode code points": not
// bytes). The decoder is strict, as RFC 3629 asks: overlong forms, UTF-16 surrogates,
// values above U+10FFFF, stray continuation bytes and truncated sequences are all errors,
// so every text has exactly one decoding and a vocabulary never holds a malformed symbol.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace mg {

// Decodes BYTES; InputError "SOURCE: invalid UTF-8 at byte offset N (reason)", where N is
// the 0-based offset of the first byte of the offending sequence.
std::u32string decode_utf8(std::string_view bytes, const std::string& source);

// The same for a file read in chunks: appends the code points of BYTES, which begin at
// byte BASE_OFFSET of SOURCE, to OUT and returns how many bytes it consumed. When
// MORE_FOLLOWS, a sequence cut short by the end of BYTES is left unconsumed (the caller
// hands those bytes in again at the head of the next chunk); otherwise it is an error.
// Error offsets count from the start of SOURCE, so they equal decode_utf8's on the whole.
size_t decode_utf8_chunk(std::string_view bytes, uint64_t base_offset, bool more_follows,
                         const std::string& source, std::u32string& out);

// Encodes one code point (a Unicode scalar value: <= U+10FFFF, not a surrogate).
std::string encode_utf8(char32_t code_point);
std::string encode_utf8(std::u32string_view text);

// "U+4E01": how error messages name a symbol, whether or not it is printable.
std::string code_point_label(char32_t code_point);

}  // namespace mg
