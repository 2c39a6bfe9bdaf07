// The training corpus (docs/data.md): a UTF-8 file, its vocabulary, and its ids split
// into a training head and a validation tail. The file is streamed twice (once for the
// vocabulary and the UTF-8 check, once to encode), so the only thing held whole is the
// compact ids: a 100 MB corpus never sits in memory as bytes and code points as well.
#pragma once

#include <cstdint>
#include <filesystem>

#include "data/token_ids.h"
#include "data/vocab.h"

namespace mg {

struct Corpus {
  Vocab vocab;
  TokenIds train;       // the first floor((1 - val_fraction) * symbols) ids
  TokenIds val;         // the rest (both views of one shared buffer)
  int64_t symbols = 0;  // code points in the file
};

// Reads, decodes and splits PATH. InputError, naming the path, when the file is missing,
// empty or not UTF-8 (with the byte offset), when val_fraction is outside [0, 1), or when
// either split is shorter than block_size + 1 symbols (one window of inputs plus its
// shifted targets), or when the file changes between the two reads.
Corpus load_corpus(const std::filesystem::path& path, double val_fraction, int64_t block_size);

}  // namespace mg
