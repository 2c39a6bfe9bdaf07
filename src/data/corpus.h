// The training corpus (SPEC section 3): a UTF-8 file read whole, its vocabulary, and its
// ids split into a training head and a validation tail.
#pragma once

#include <cstdint>
#include <filesystem>
#include <vector>

#include "data/vocab.h"

namespace mg {

struct Corpus {
  Vocab vocab;
  std::vector<int32_t> train;  // the first floor((1 - val_fraction) * symbols) ids
  std::vector<int32_t> val;    // the rest
  int64_t symbols = 0;         // code points in the file
};

// Reads, decodes and splits PATH. InputError, naming the path, when the file is missing,
// empty or not UTF-8, when val_fraction is outside [0, 1), or when either split is shorter
// than block_size + 1 symbols (one window of inputs plus its shifted targets).
Corpus load_corpus(const std::filesystem::path& path, double val_fraction, int64_t block_size);

}  // namespace mg
