// Corpus loading in two streamed passes and the train/validation split. Pass 1 checks the
// UTF-8 and marks which code points occur (one flag each for the 1.1 million possible);
// pass 2 encodes into ids of the narrowest width the vocabulary allows. Peak memory is the
// ids plus two ~1 MB pieces and a code point -> id table of at most 4.4 MB.
#include "data/corpus.h"

#include <cmath>
#include <sstream>

#include "data/text_file.h"
#include "core/error.h"

namespace mg {
namespace {

constexpr char32_t kMaxCodePoint = 0x10FFFF;

[[noreturn]] void changed_while_read(const std::filesystem::path& path) {
  throw InputError("corpus " + path.string() + " changed while it was being read; load it again");
}

// Pass 1: the sorted distinct code points and the symbol count.
Vocab scan_vocabulary(const std::filesystem::path& path, int64_t& symbols, char32_t& max_code_point) {
  std::vector<bool> seen(kMaxCodePoint + 1, false);
  max_code_point = 0;
  symbols = for_each_utf8_piece(path, "corpus", [&](std::u32string_view piece) {
    for (char32_t c : piece) {
      seen[c] = true;  // the strict decoder never yields a value above U+10FFFF
      if (c > max_code_point) max_code_point = c;
    }
  });
  if (symbols == 0) throw InputError("corpus " + path.string() + " is empty");
  std::u32string distinct;
  for (char32_t c = 0; c <= max_code_point; ++c)
    if (seen[c]) distinct.push_back(c);
  return Vocab::from_text(distinct);
}

// Pass 2: every symbol's id, written piece by piece into the compact buffer.
TokenIds encode_corpus(const std::filesystem::path& path, const Vocab& vocab, int64_t symbols,
                       char32_t max_code_point) {
  std::vector<int32_t> id_of(static_cast<size_t>(max_code_point) + 1, -1);  // code point -> id
  for (int32_t id = 0; id < vocab.size(); ++id) id_of[vocab.code_point(id)] = id;
  TokenIds ids(symbols, vocab.size());
  std::vector<int32_t> piece_ids;
  int64_t written = 0;
  const int64_t total = for_each_utf8_piece(path, "corpus", [&](std::u32string_view piece) {
    if (written + static_cast<int64_t>(piece.size()) > symbols) changed_while_read(path);
    piece_ids.resize(piece.size());
    for (size_t i = 0; i < piece.size(); ++i) {
      if (piece[i] > max_code_point || id_of[piece[i]] < 0) changed_while_read(path);
      piece_ids[i] = id_of[piece[i]];
    }
    ids.assign(written, piece_ids);
    written += static_cast<int64_t>(piece.size());
  });
  if (total != symbols) changed_while_read(path);
  return ids;
}

}  // namespace

Corpus load_corpus(const std::filesystem::path& path, double val_fraction, int64_t block_size) {
  if (!(val_fraction >= 0.0 && val_fraction < 1.0)) {
    std::ostringstream message;
    message << "data.val_fraction must be in [0, 1), got " << val_fraction;
    throw InputError(message.str());
  }
  Corpus corpus;
  char32_t max_code_point = 0;
  corpus.vocab = scan_vocabulary(path, corpus.symbols, max_code_point);
  const TokenIds ids = encode_corpus(path, corpus.vocab, corpus.symbols, max_code_point);

  // Rounding: the training head is floor((1 - val_fraction) * n) symbols, the product
  // taken in double, so the validation tail gets the fractional symbol: with n = 500,040
  // and 0.1 the split is 450,036 / 50,004.
  const auto n_train = static_cast<int64_t>(std::floor((1.0 - val_fraction) * static_cast<double>(corpus.symbols)));
  corpus.train = ids.slice(0, n_train);
  corpus.val = ids.slice(n_train, corpus.symbols - n_train);

  const int64_t train_len = corpus.train.size(), val_len = corpus.val.size();
  if (train_len < block_size + 1 || val_len < block_size + 1) {
    std::ostringstream message;
    message << "corpus " << path.string() << ": data.val_fraction " << val_fraction << " splits its "
            << corpus.symbols << " symbols into " << train_len << " train and " << val_len
            << " validation, but block_size " << block_size << " needs at least " << block_size + 1
            << " in each";
    throw InputError(message.str());
  }
  return corpus;
}

}  // namespace mg
