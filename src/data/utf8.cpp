// Strict UTF-8 decoding and encoding. The table of well-formed sequences (RFC 3629,
// Unicode Table 3-7) decides by the lead byte how many continuation bytes follow and
// which range the first of them may take:
//   00..7F                         one byte
//   C2..DF  80..BF                 two bytes (C0, C1 would be overlong)
//   E0      A0..BF  80..BF         three bytes (E0 80..9F would be overlong)
//   E1..EC, EE..EF  80..BF 80..BF
//   ED      80..9F  80..BF         (ED A0..BF would be a surrogate D800..DFFF)
//   F0      90..BF  80..BF 80..BF  four bytes (F0 80..8F would be overlong)
//   F1..F3  80..BF  80..BF 80..BF
//   F4      80..8F  80..BF 80..BF  (F4 90.. would exceed U+10FFFF; F5..FF never occur)
#include "data/utf8.h"

#include <cstdint>
#include <cstdio>

#include "core/error.h"

namespace mg {
namespace {

[[noreturn]] void invalid(const std::string& source, uint64_t offset, const char* reason) {
  throw InputError(source + ": invalid UTF-8 at byte offset " + std::to_string(offset) + " (" + reason + ")");
}

}  // namespace

size_t decode_utf8_chunk(std::string_view bytes, uint64_t base_offset, bool more_follows,
                         const std::string& source, std::u32string& out) {
  const size_t n = bytes.size();
  size_t i = 0;
  while (i < n) {
    const auto lead = static_cast<uint8_t>(bytes[i]);
    if (lead < 0x80) {
      out.push_back(lead);
      ++i;
      continue;
    }
    const uint64_t at = base_offset + i;  // offset of the sequence in the whole source
    int continuation = 0;       // bytes after the lead
    uint8_t second_low = 0x80;  // allowed range of the byte right after the lead
    uint8_t second_high = 0xBF;
    char32_t value = 0;
    const char* range_reason = "overlong encoding";
    if (lead < 0xC0) invalid(source, at, "unexpected continuation byte");
    if (lead < 0xC2) invalid(source, at, "overlong encoding");
    if (lead < 0xE0) {
      continuation = 1;
      value = lead & 0x1F;
    } else if (lead < 0xF0) {
      continuation = 2;
      value = lead & 0x0F;
      if (lead == 0xE0) second_low = 0xA0;
      if (lead == 0xED) second_high = 0x9F, range_reason = "UTF-16 surrogate";
    } else if (lead < 0xF5) {
      continuation = 3;
      value = lead & 0x07;
      if (lead == 0xF0) second_low = 0x90;
      if (lead == 0xF4) second_high = 0x8F, range_reason = "code point above U+10FFFF";
    } else {
      invalid(source, at, "code point above U+10FFFF");
    }
    for (int k = 1; k <= continuation; ++k) {
      if (i + k >= n) {
        if (more_follows) return i;  // the rest of this sequence is in the next chunk
        invalid(source, at, "truncated sequence");
      }
      const auto byte = static_cast<uint8_t>(bytes[i + k]);
      if (byte < 0x80 || byte > 0xBF) invalid(source, at, "truncated sequence");
      if (k == 1 && (byte < second_low || byte > second_high)) invalid(source, at, range_reason);
      value = (value << 6) | (byte & 0x3F);
    }
    out.push_back(value);
    i += static_cast<size_t>(continuation) + 1;
  }
  return n;
}

std::u32string decode_utf8(std::string_view bytes, const std::string& source) {
  std::u32string text;
  text.reserve(bytes.size());
  decode_utf8_chunk(bytes, 0, /*more_follows=*/false, source, text);
  return text;
}

std::string encode_utf8(char32_t c) {
  MG_CHECK(c <= 0x10FFFF && !(c >= 0xD800 && c <= 0xDFFF), "not a Unicode scalar value: " + code_point_label(c));
  std::string out;
  if (c < 0x80) {
    out.push_back(static_cast<char>(c));
  } else if (c < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (c >> 6)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else if (c < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (c >> 12)));
    out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (c >> 18)));
    out.push_back(static_cast<char>(0x80 | ((c >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  }
  return out;
}

std::string encode_utf8(std::u32string_view text) {
  std::string out;
  out.reserve(text.size() * 3);
  for (char32_t c : text) out += encode_utf8(c);
  return out;
}

std::string code_point_label(char32_t code_point) {
  char buffer[16];
  std::snprintf(buffer, sizeof buffer, "U+%04X", static_cast<unsigned>(code_point));
  return buffer;
}

}  // namespace mg
