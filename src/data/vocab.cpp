// Vocabulary construction, lookup, encoding and decoding. Lookup is a binary search over
// the sorted code points: the id of a symbol is its rank, which is exactly the position
// std::lower_bound finds.
#include "data/vocab.h"

#include <algorithm>
#include <utility>

#include "data/utf8.h"
#include "core/error.h"

namespace mg {
namespace {

constexpr char32_t kMaxCodePoint = 0x10FFFF;

// How an error message shows a symbol: "X" (U+XXXX), or only U+XXXX for a control
// character, which would break the one-line message or be invisible.
std::string describe_symbol(char32_t c) {
  const bool printable = c >= 0x20 && c != 0x7F && !(c >= 0x80 && c < 0xA0);
  return printable ? "\"" + encode_utf8(c) + "\" (" + code_point_label(c) + ")" : code_point_label(c);
}

}  // namespace

Vocab::Vocab(std::vector<char32_t> sorted_code_points) : code_points_(std::move(sorted_code_points)) {
  symbols_.reserve(code_points_.size());
  for (char32_t c : code_points_) symbols_.push_back(encode_utf8(c));
}

Vocab Vocab::from_text(std::u32string_view text) {
  if (text.empty()) throw InputError("cannot build a vocabulary from an empty text");
  // One flag per possible code point (1.1 million bits): a linear pass, then the set
  // flags read out in ascending order are the sorted distinct symbols.
  std::vector<bool> seen(kMaxCodePoint + 1, false);
  for (char32_t c : text) {
    MG_CHECK(c <= kMaxCodePoint, "decoded text holds " + code_point_label(c));
    seen[c] = true;
  }
  std::vector<char32_t> code_points;
  for (char32_t c = 0; c <= kMaxCodePoint; ++c)
    if (seen[c]) code_points.push_back(c);
  return Vocab(std::move(code_points));
}

Vocab Vocab::from_symbols(const std::vector<std::string>& symbols, const std::string& source) {
  if (symbols.empty()) throw InputError(source + ": the vocabulary is empty");
  std::vector<char32_t> code_points;
  code_points.reserve(symbols.size());
  for (size_t i = 0; i < symbols.size(); ++i) {
    const std::string where = source + ": entry " + std::to_string(i);
    const std::u32string decoded = decode_utf8(symbols[i], where);
    if (decoded.size() != 1)
      throw InputError(where + " has " + std::to_string(decoded.size()) + " code points, expected exactly 1");
    if (!code_points.empty() && decoded[0] <= code_points.back()) {
      const char* fault = decoded[0] == code_points.back() ? " repeats entry " : " sorts before entry ";
      throw InputError(where + " " + describe_symbol(decoded[0]) + fault + std::to_string(i - 1) + " " +
                       describe_symbol(code_points.back()) + "; expected distinct symbols sorted by code point");
    }
    code_points.push_back(decoded[0]);
  }
  return Vocab(std::move(code_points));
}

std::string Vocab::symbol(int32_t id) const {
  MG_CHECK(id >= 0 && id < size(), "id " + std::to_string(id) + " outside a vocabulary of " + std::to_string(size()));
  return symbols_[static_cast<size_t>(id)];
}

char32_t Vocab::code_point(int32_t id) const {
  MG_CHECK(id >= 0 && id < size(), "id " + std::to_string(id) + " outside a vocabulary of " + std::to_string(size()));
  return code_points_[static_cast<size_t>(id)];
}

std::optional<int32_t> Vocab::find(char32_t code_point) const {
  auto it = std::lower_bound(code_points_.begin(), code_points_.end(), code_point);
  if (it == code_points_.end() || *it != code_point) return std::nullopt;
  return static_cast<int32_t>(it - code_points_.begin());
}

std::optional<std::vector<int32_t>> Vocab::find_all(std::u32string_view text) const {
  std::vector<int32_t> ids;
  ids.reserve(text.size());
  for (char32_t c : text) {
    auto id = find(c);
    if (!id) return std::nullopt;
    ids.push_back(*id);
  }
  return ids;
}

std::vector<int32_t> Vocab::encode(std::u32string_view text, const std::string& what) const {
  std::vector<int32_t> ids;
  ids.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    auto id = find(text[i]);
    if (!id)
      throw InputError(what + ": symbol " + describe_symbol(text[i]) + " at position " + std::to_string(i) +
                       " is not in the vocabulary of " + std::to_string(size()) + " symbols");
    ids.push_back(*id);
  }
  return ids;
}

std::string Vocab::decode(std::span<const int32_t> ids) const {
  std::string out;
  for (int32_t id : ids) out += symbol(id);
  return out;
}

}  // namespace mg
