// libFuzzer target: the strict UTF-8 decoder and the vocabulary built on it.
// Input: TEXT [0xFF QUERY] (0xFF never occurs in UTF-8, so it cannot be confused with
// text). Checked against a second, independent decoder: TEXT decodes exactly when the
// reference finds it well-formed, re-encodes to the same bytes, and an error names the
// reference's first bad offset. A vocabulary built from TEXT finds every symbol at its
// rank; QUERY encodes through it exactly when all its symbols are known, else the error
// names the first unknown one. The chunked decoder a file reader uses must agree with
// the whole-text decoder for every chunk size. Lines of TEXT are also handed to Vocab::from_symbols as a
// checkpoint's symbol list, which must accept exactly the strictly ascending single
// code points.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "data/utf8.h"
#include "data/vocab.h"
#include "fuzz_support.h"
#include "core/error.h"

namespace {

using mg::fuzz::expect;
using mg::fuzz::expect_one_line;
using mg::fuzz::fail;

// The reference: the sequence length comes from the lead byte's high bits, the value is
// assembled from the payload bits, and only then are the rules applied to the value
// (shortest form for its length, no surrogate, at most U+10FFFF) instead of the
// decoder's per-lead-byte ranges for the second byte.
struct Reference {
  std::u32string text;
  std::optional<size_t> bad_offset;  // first byte of the first ill-formed sequence
};

Reference reference_decode(std::string_view bytes) {
  Reference r;
  size_t i = 0;
  while (i < bytes.size()) {
    const auto lead = static_cast<uint8_t>(bytes[i]);
    size_t length = 0;
    char32_t value = 0;
    if ((lead & 0x80) == 0) length = 1, value = lead;
    else if ((lead & 0xE0) == 0xC0) length = 2, value = lead & 0x1F;
    else if ((lead & 0xF0) == 0xE0) length = 3, value = lead & 0x0F;
    else if ((lead & 0xF8) == 0xF0) length = 4, value = lead & 0x07;
    else return r.bad_offset = i, r;  // continuation byte or F8..FF as a lead
    if (i + length > bytes.size()) return r.bad_offset = i, r;
    for (size_t k = 1; k < length; ++k) {
      const auto byte = static_cast<uint8_t>(bytes[i + k]);
      if ((byte & 0xC0) != 0x80) return r.bad_offset = i, r;
      value = value << 6 | (byte & 0x3F);
    }
    static constexpr char32_t kShortest[5] = {0, 0, 0x80, 0x800, 0x10000};
    if (value < kShortest[length] || (value >= 0xD800 && value <= 0xDFFF) || value > 0x10FFFF)
      return r.bad_offset = i, r;
    r.text.push_back(value);
    i += length;
  }
  return r;
}

// "...at byte offset N (...)": the N an InputError names.
size_t offset_in(const std::string& message) {
  const std::string marker = "at byte offset ";
  const size_t at = message.find(marker);
  expect(at != std::string::npos, "decode error without a byte offset: " + message);
  return std::stoul(message.substr(at + marker.size()));
}

void check_chunked(std::string_view bytes, const std::optional<std::u32string>& whole, const std::string& whole_error);

std::optional<std::u32string> checked_decode(std::string_view bytes) {
  const Reference want = reference_decode(bytes);
  try {
    std::u32string text = mg::decode_utf8(bytes, "fuzz");
    expect(!want.bad_offset, "decoded bytes the reference refuses at offset " + std::to_string(*want.bad_offset));
    expect(text == want.text, "decoded text differs from the reference's");
    expect(mg::encode_utf8(text) == bytes, "decode then encode does not give the bytes back");
    check_chunked(bytes, text, "");
    return text;
  } catch (const mg::InputError& e) {
    check_chunked(bytes, std::nullopt, e.what());
    expect_one_line(e.what());
    expect(std::string_view(e.what()).substr(0, 6) == "fuzz: ", "decode error does not name its source");
    expect(want.bad_offset.has_value(), std::string("refused bytes the reference decodes: ") + e.what());
    expect(offset_in(e.what()) == *want.bad_offset,
           std::string(e.what()) + ", the reference says offset " + std::to_string(*want.bad_offset));
    return std::nullopt;
  }
}

// decode_utf8_chunk as a file reader calls it (text_file.cpp): each chunk appended to
// the bytes the previous call left unconsumed. Every chunk size must give exactly what
// decode_utf8 gives on the whole: the same code points, or the same error message.
void check_chunked(std::string_view bytes, const std::optional<std::u32string>& whole, const std::string& whole_error) {
  for (size_t chunk : {1, 2, 3, 5, 64}) {
    std::u32string text;
    std::string pending;
    uint64_t consumed = 0;
    try {
      for (size_t at = 0; at < bytes.size() || !pending.empty();) {
        const size_t take = std::min(chunk, bytes.size() - at);
        pending.append(bytes.substr(at, take));
        at += take;
        const bool more = at < bytes.size();
        const size_t used = mg::decode_utf8_chunk(pending, consumed, more, "fuzz", text);
        expect(used <= pending.size(), "decode_utf8_chunk consumed more than it was given");
        expect(more || used == pending.size(), "the last chunk was not consumed whole");
        expect(used >= pending.size() || pending.size() - used < 4, "more than 3 bytes left unconsumed");
        pending.erase(0, used);
        consumed += used;
        if (!more) break;
      }
      expect(whole.has_value(), "chunks of " + std::to_string(chunk) + " decoded what decode_utf8 refuses: " + whole_error);
      expect(text == *whole, "chunks of " + std::to_string(chunk) + " decoded other code points");
    } catch (const mg::InputError& e) {
      expect(!whole.has_value(), "chunks of " + std::to_string(chunk) + " refused valid text: " + e.what());
      expect(e.what() == whole_error, "chunks of " + std::to_string(chunk) + " gave " + e.what() + ", whole gave " + whole_error);
    }
  }
}

void check_vocab(const mg::Vocab& vocab, const std::set<char32_t>& symbols, std::u32string_view query) {
  expect(vocab.size() == static_cast<int64_t>(symbols.size()), "vocabulary size differs from the distinct symbols");
  int32_t id = 0;
  for (char32_t c : symbols) {
    expect(vocab.find(c) == id, "symbol " + mg::code_point_label(c) + " not found at its rank");
    expect(vocab.code_point(id) == c && vocab.symbol(id) == mg::encode_utf8(c), "id does not map back to its symbol");
    ++id;
  }
  size_t first_unknown = query.size();
  for (size_t i = 0; i < query.size() && first_unknown == query.size(); ++i)
    if (!symbols.count(query[i])) first_unknown = i;
  try {
    const std::vector<int32_t> ids = vocab.encode(query, "query");
    expect(first_unknown == query.size(), "encoded a query holding an unknown symbol");
    expect(vocab.decode(ids) == mg::encode_utf8(query), "decode(encode(query)) differs from the query");
  } catch (const mg::InputError& e) {
    expect_one_line(e.what());
    expect(first_unknown < query.size(), std::string("refused a query of known symbols: ") + e.what());
    const std::string position = "at position " + std::to_string(first_unknown) + " ";
    expect(std::string(e.what()).find(position) != std::string::npos,
           std::string(e.what()) + ", expected " + position);
  }
}

// Vocab::from_symbols on the lines of TEXT, against the rule it documents.
void check_from_symbols(std::string_view text) {
  std::vector<std::string> lines;
  size_t start = 0;
  for (size_t i = 0; i <= text.size(); ++i) {
    if (i == text.size() || text[i] == '\n') {
      lines.emplace_back(text.substr(start, i - start));
      start = i + 1;
    }
  }
  bool acceptable = true;
  std::optional<char32_t> previous;
  for (const std::string& line : lines) {
    const Reference r = reference_decode(line);
    if (r.bad_offset || r.text.size() != 1 || (previous && r.text[0] <= *previous)) {
      acceptable = false;
      break;
    }
    previous = r.text[0];
  }
  try {
    const mg::Vocab vocab = mg::Vocab::from_symbols(lines, "ckpt: __metadata__.vocab");
    expect(acceptable, "from_symbols accepted a list that is not strictly ascending single code points");
    expect(vocab.symbols() == lines, "from_symbols changed the symbols");
  } catch (const mg::InputError& e) {
    expect_one_line(e.what());
    expect(!acceptable, std::string("from_symbols refused a valid list: ") + e.what());
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const size_t split = input.find('\xFF');
  const std::string_view text = input.substr(0, split);
  const std::optional<std::u32string> decoded = checked_decode(text);
  check_from_symbols(text);
  if (split == std::string_view::npos) return 0;

  const std::string_view query_bytes = input.substr(split + 1);
  const std::optional<std::u32string> query = checked_decode(query_bytes);
  if (!decoded) return 0;
  const std::set<char32_t> symbols(decoded->begin(), decoded->end());
  if (decoded->empty()) {
    try {
      mg::Vocab::from_text(*decoded);
      fail("built a vocabulary from an empty text");
    } catch (const mg::InputError& e) {
      expect_one_line(e.what());
    }
    return 0;
  }
  // The vocabulary of TEXT: its distinct symbols in ascending order, as a checkpoint
  // lists them (Vocab::from_text gives the same, data_test checks; it scans a flag per
  // possible code point, 1.1 million, ~50 ms under the sanitizers, too slow to fuzz).
  std::vector<std::string> sorted;
  for (char32_t c : symbols) sorted.push_back(mg::encode_utf8(c));
  const mg::Vocab vocab = mg::Vocab::from_symbols(sorted, "fuzz vocab");
  check_vocab(vocab, symbols, query ? std::u32string_view(*query) : std::u32string_view());
  return 0;
}
