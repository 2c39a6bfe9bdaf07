// Corpus loading and the train/validation split.
#include "data/corpus.h"

#include <cmath>
#include <sstream>

#include "data/text_file.h"
#include "tensor/error.h"

namespace mg {

Corpus load_corpus(const std::filesystem::path& path, double val_fraction, int64_t block_size) {
  if (!(val_fraction >= 0.0 && val_fraction < 1.0)) {
    std::ostringstream message;
    message << "data.val_fraction must be in [0, 1), got " << val_fraction;
    throw InputError(message.str());
  }
  const std::u32string text = read_utf8_file(path, "corpus");
  if (text.empty()) throw InputError("corpus " + path.string() + " is empty");

  Corpus corpus;
  corpus.vocab = Vocab::from_text(text);
  const std::vector<int32_t> ids = corpus.vocab.encode(text, path.string());
  corpus.symbols = static_cast<int64_t>(ids.size());

  // Rounding: the training head is floor((1 - val_fraction) * n) symbols, the product
  // taken in double, so the validation tail gets the fractional symbol: with n = 500,040
  // and 0.1 the split is 450,036 / 50,004.
  const auto n_train = static_cast<int64_t>(std::floor((1.0 - val_fraction) * static_cast<double>(corpus.symbols)));
  corpus.train.assign(ids.begin(), ids.begin() + n_train);
  corpus.val.assign(ids.begin() + n_train, ids.end());

  const auto train_len = static_cast<int64_t>(corpus.train.size());
  const auto val_len = static_cast<int64_t>(corpus.val.size());
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
