// The entropy floors scripts/make_corpus.py records beside a corpus (its folder's
// floors.json), so that a loss can be printed next to the lowest any model can reach on
// the same reading: the validation story rows `train` samples, and texts `eval
// --text-file` scores (the corpus's validation tail). A floor applies only to exactly
// what it was computed for: the corpus's bytes and the text's bytes are matched by
// SHA-256, block_size and val_fraction by value; anything else has no known floor.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "io/config.h"

namespace mg {

struct FloorRecord {
  std::filesystem::path file;  // where it was read
  std::string corpus_sha256;   // hex digest of the corpus file's bytes
  int64_t block_size = 0;
  double val_fraction = 0.0;
  double validation_story_rows = 0.0;  // nats per target over the validation split's story rows
  struct Text {
    std::string sha256;  // of the text file's bytes
    double floor = 0.0;  // nats per prediction of eval --text-file's windows
    std::string about;   // what the text is, for the printed line (raw: print it through printable_text)
  };
  std::vector<Text> texts;
};

// The name of the record in a corpus's folder.
inline constexpr const char* kFloorRecordName = "floors.json";

// The record beside CORPUS, or nullopt when the folder has none. InputError naming the
// file when it exists but is malformed.
std::optional<FloorRecord> read_floor_record(const std::filesystem::path& corpus);

// The floor of CONFIG's validation loss: data.row_start "story", the corpus's bytes, its
// block_size and val_fraction all as recorded beside data.path; else nullopt.
std::optional<double> known_validation_floor(const Config& config);

// The floor of `eval --text-file` on TEXT_BYTES read by a model of BLOCK_SIZE trained on
// CORPUS: a recorded text with the same bytes and block_size; else nullopt.
std::optional<FloorRecord::Text> known_text_floor(const std::filesystem::path& corpus, std::string_view text_bytes,
                                                  int64_t block_size);

}  // namespace mg
