// The vocabulary (docs/data.md, "Vocabulary"): the distinct code points of a corpus, sorted by code
// point, each one's id its rank. Sorting makes the ids a function of the symbol set alone,
// so the same corpus always gives the same ids, and a checkpoint's "vocab" metadata (the
// symbols as strings, in id order) rebuilds exactly the vocabulary it was trained with.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace mg {

class Vocab {
 public:
  Vocab() = default;

  // The distinct code points of TEXT, sorted; InputError when TEXT is empty.
  static Vocab from_text(std::u32string_view text);

  // From a checkpoint's "vocab" list: each entry one code point in UTF-8, strictly
  // ascending (sorted and distinct), at least one entry. InputError names SOURCE, the
  // entry's index and what was found.
  static Vocab from_symbols(const std::vector<std::string>& symbols, const std::string& source = "vocab");

  int64_t size() const { return static_cast<int64_t>(code_points_.size()); }
  std::string symbol(int32_t id) const;  // UTF-8
  char32_t code_point(int32_t id) const;
  const std::vector<std::string>& symbols() const { return symbols_; }  // UTF-8, in id order

  std::optional<int32_t> find(char32_t code_point) const;
  // The ids of TEXT, or nothing when one of its symbols is not in the vocabulary.
  std::optional<std::vector<int32_t>> find_all(std::u32string_view text) const;

  // Ids of TEXT; InputError "WHAT: symbol "X" (U+XXXX) at position N is not in the
  // vocabulary of V symbols" (N: 0-based symbol index) for the first unknown symbol.
  std::vector<int32_t> encode(std::u32string_view text, const std::string& what) const;
  std::string decode(std::span<const int32_t> ids) const;

 private:
  explicit Vocab(std::vector<char32_t> sorted_code_points);
  std::vector<char32_t> code_points_;  // [V], ascending: id -> code point
  std::vector<std::string> symbols_;   // [V], the same as UTF-8 strings
};

}  // namespace mg
