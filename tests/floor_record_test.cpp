// The entropy floors recorded beside a corpus (io/floor_record.h): the shipped record
// matches the shipped corpus and configs/default.json, and a floor is given only for the
// exact bytes, block_size and val_fraction it was computed for.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <string>

#include "core/error.h"
#include "io/config.h"
#include "io/floor_record.h"
#include "io/sha256.h"
#include "test_support.h"
#include "error_support.h"

namespace mg {
namespace {

namespace fs = std::filesystem;
using test::input_error_of;

void write(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
}

TEST(FloorRecord, TheShippedRecordHoldsForTheShippedCorpusAndItsTail) {
  Config config = load_config(test::source_dir() / "configs" / "default.json");
  const std::optional<double> floor = known_validation_floor(config);
  ASSERT_TRUE(floor.has_value()) << "data/floors.json must match data/corpus.txt (regenerate both with make_corpus.py)";
  EXPECT_DOUBLE_EQ(*floor, 0.55237);

  // The validation tail as scripts/main_job.sh cuts it: the last 50,000 symbols.
  const std::string corpus = test::read_text(config.data.path);
  size_t start = corpus.size();
  for (int symbols = 0; symbols < 50000; ++symbols) {
    do --start;
    while ((static_cast<unsigned char>(corpus[start]) & 0xC0) == 0x80);  // back to a UTF-8 lead byte
  }
  const auto tail = known_text_floor(config.data.path, std::string_view(corpus).substr(start), 64);
  ASSERT_TRUE(tail.has_value());
  EXPECT_DOUBLE_EQ(tail->floor, 0.644343);
  EXPECT_FALSE(known_text_floor(config.data.path, std::string_view(corpus).substr(start + 3), 64))
      << "one symbol less is another text";
  EXPECT_FALSE(known_text_floor(config.data.path, std::string_view(corpus).substr(start), 32)) << "another block_size";
}

TEST(FloorRecord, AFloorHoldsOnlyForItsCorpusSplitAndRows) {
  const fs::path dir = test::fresh_dir("floor_record");
  const std::string corpus = "ab\nab\n", text = "ab\n";
  write(dir / "corpus.txt", corpus);
  write(dir / "floors.json", "{\"block_size\": 4, \"corpus_sha256\": \"" + sha256_hex(corpus) +
                                 "\", \"texts\": [{\"about\": \"a line\", \"floor\": 0.5, \"sha256\": \"" +
                                 sha256_hex(text) + "\"}], \"val_fraction\": 0.25, \"validation_story_rows\": 0.125}\n");
  Config config;
  config.data.path = (dir / "corpus.txt").string();
  config.model.block_size = 4;
  config.data.val_fraction = 0.25;
  EXPECT_FALSE(known_validation_floor(config)) << "random rows have no recorded floor";
  config.data.row_start = "story";
  EXPECT_EQ(known_validation_floor(config), 0.125);
  config.data.val_fraction = 0.1;
  EXPECT_FALSE(known_validation_floor(config)) << "another split";
  config.data.val_fraction = 0.25;
  config.model.block_size = 8;
  EXPECT_FALSE(known_validation_floor(config)) << "another row length";
  config.model.block_size = 4;
  write(dir / "corpus.txt", "ab\nac\n");
  EXPECT_FALSE(known_validation_floor(config)) << "another corpus";

  const auto line = known_text_floor(dir / "corpus.txt", text, 4);
  ASSERT_TRUE(line.has_value());
  EXPECT_EQ(line->floor, 0.5);
  EXPECT_EQ(line->about, "a line");
  EXPECT_FALSE(known_text_floor(dir / "corpus.txt", "ac\n", 4));
  EXPECT_FALSE(known_text_floor(dir / "none" / "corpus.txt", text, 4)) << "no record beside the corpus";
  EXPECT_FALSE(known_text_floor("", text, 4));

  write(dir / "floors.json", "{\"block_size\": 4, \"corpus_sha256\": 7}");
  EXPECT_EQ(input_error_of([&] { known_text_floor(dir / "corpus.txt", text, 4); }),
            (dir / "floors.json").string() + ": corpus_sha256 must be a string, found 7");
  write(dir / "floors.json", "[1]");
  EXPECT_EQ(input_error_of([&] { read_floor_record(dir / "corpus.txt"); }),
            (dir / "floors.json").string() + ": must be a JSON object, found [1]");
  fs::remove_all(dir);
}

// A tampered record is refused as it is read, not printed (issue 45): a floor outside
// [0, 13.93] nats per symbol, a val_fraction outside (0, 1).
TEST(FloorRecord, ATamperedRecordIsRefusedNamingTheKey) {
  const fs::path dir = test::fresh_dir("floor_record_tampered");
  const std::string text = "ab\n";
  write(dir / "corpus.txt", "ab\nab\n");
  const auto record = [&](const std::string& floor, const std::string& val_fraction, const std::string& rows) {
    write(dir / "floors.json", "{\"block_size\": 4, \"corpus_sha256\": \"x\", \"texts\": [{\"about\": \"a\", \"floor\": " +
                                   floor + ", \"sha256\": \"" + sha256_hex(text) + "\"}], \"val_fraction\": " +
                                   val_fraction + ", \"validation_story_rows\": " + rows + "}\n");
  };
  // The refusal of each tampered record, from its file's name on.
  const auto refusal = [&](const std::string& floor, const std::string& val_fraction, const std::string& rows) {
    record(floor, val_fraction, rows);
    const std::string message = input_error_of([&] { known_text_floor(dir / "corpus.txt", text, 4); });
    const std::string origin = (dir / "floors.json").string() + ": ";
    return message.rfind(origin, 0) == 0 ? message.substr(origin.size()) : message;
  };
  EXPECT_EQ(refusal("99", "0.25", "0.1"), "floor must be in [0, 13.93] nats per symbol, found 99");
  EXPECT_EQ(refusal("-1e300", "0.25", "0.1"), "floor must be in [0, 13.93] nats per symbol, found -1e+300");
  EXPECT_EQ(refusal("0.5", "5", "0.1"), "val_fraction must be a number in (0, 1), found 5");
  EXPECT_EQ(refusal("0.5", "0.25", "1e308"), "validation_story_rows must be in [0, 13.93] nats per symbol, found 1e+308");
  record("13.9", "0.25", "0");
  EXPECT_EQ(known_text_floor(dir / "corpus.txt", text, 4)->floor, 13.9);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace mg
